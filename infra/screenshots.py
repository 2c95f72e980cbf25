"""Regenerates docs/screenshots/*.png: every page at 1280 and 390 px wide: the chat signed out and
signed in with two answers (one answer's details open, the conversation shared), the conversations
drawer (narrow only), the run list signed in and out, a run, two runs compared, an answer's trace
and a shared conversation.

    .venv/bin/python infra/screenshots.py            # writes docs/screenshots/
    .venv/bin/python infra/screenshots.py --serve    # the same app, left running to look at by hand

It starts the app in this process, as the browser tests do: DynamoDB on moto (nothing leaves the
machine), the sample benchmark runs, the offline answerer, and the search index of `make run`
(`GROUNDCHAT_HOME`, built here the first time if the corpus is beside the checkout; `--no-search`
skips it and answers without the legal texts). Chromium is Debian's (`/usr/bin/chromium`), driven
by Playwright.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "screenshots"
WIDTHS = {"1280": (1280, 900), "390": (390, 844)}
# Also checked by hand, not kept in docs/: `--widths 320` (the narrowest phone).
VIEWPORTS = {**WIDTHS, "320": (320, 640)}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
QUESTIONS = ["Which context level is best, and what does it cost?",
             "What does the European Accessibility Act require of e-commerce services?"]


def _isolate() -> None:
    """The offline answerer, dev sign-in, and fake AWS credentials moto accepts: no real AWS call."""
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[key]
    os.environ.update({"AWS_ACCESS_KEY_ID": "screenshots", "AWS_SECRET_ACCESS_KEY": "screenshots", "AWS_DEFAULT_REGION": "eu-west-1",
                       "GROUNDCHAT_MODEL": "offline", "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_BOT_NAME": "groundchat"})
    for key in ("GROUNDCHAT_DYNAMODB_ENDPOINT", "GROUNDCHAT_OPENSEARCH_ENDPOINT", "GROUNDCHAT_SEARCH_BACKEND", "GROUNDCHAT_TABLE_PREFIX"):
        os.environ.pop(key, None)
    os.environ.setdefault("GROUNDCHAT_HOME", str(REPO / ".groundchat"))
    os.environ.setdefault("GROUNDCHAT_DEV_SECRET", secrets.token_hex(32))


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _serve(app):
    from groundchat_cli.serving import serve_in_thread

    return serve_in_thread(app, name="screenshots-app")


def build_app(search: bool):
    """The chat and share functions side by side, as the local stack serves them, over moto."""
    import asyncio

    from chat_function.app import create_app
    from groundchat.auth.callers import ALL_PERMISSIONS
    from groundchat.config import get_settings
    from groundchat.services import Services
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.users import UserStore
    from groundchat_cli.localstack import ingest_if_needed
    from groundchat_cli.moto_store import make_moto_faithful
    from groundchat_cli.sample import load_sample_if_empty_sync
    from share_function.app import add_share_routes

    settings = get_settings()
    make_moto_faithful()
    dynamo = Dynamo(settings)
    create_tables(dynamo)
    asyncio.run(UserStore(dynamo).grant(settings.dev_user, list(ALL_PERMISSIONS)))
    asyncio.run(UserStore(dynamo).grant("reader", ["chat.use"]))  # a second local user to pick
    say("loading the sample runs into moto")
    load_sample_if_empty_sync(dynamo)
    tools = None
    if search:
        ingest_if_needed(settings, say=say)
    else:
        from groundchat.tools.data_tools import DATA_TOOLS
        from groundchat.tools.view_tool import show_view

        tools = [*DATA_TOOLS, show_view]
    services = Services(settings=settings, dynamo=dynamo, tools_override=tools)
    app = create_app(services)
    add_share_routes(app, services)
    return app


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("chromium is not installed: apt-get install -y chromium")
    return found


def _wait_answers(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('.msg.assistant[data-done]').length >= {n}", timeout=120_000)


def _settled(page) -> None:
    page.wait_for_load_state("networkidle")
    page.evaluate("document.fonts.ready")


def take(url: str, out: Path, widths: dict[str, tuple[int, int]] = WIDTHS) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def shot(page, name: str) -> None:
        path = out / f"{name}.png"
        say(f"screenshot {path.name}")
        _settled(page)
        page.screenshot(path=str(path), full_page=True)
        written.append(path)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        shared_id = None
        for width, (w, h) in widths.items():
            context = browser.new_context(viewport={"width": w, "height": h})
            page = context.new_page()
            page.goto(f"{url}/chat")
            page.wait_for_selector("#dev-sign-in:not([hidden])")
            shot(page, f"chat-signed-out-{width}")
            page.click("#dev-sign-in-button")
            page.wait_for_selector("#signed-in:not([hidden])")
            for n, question in enumerate(QUESTIONS, 1):
                page.fill("#question", question)
                page.click("#ask button[type=submit]")
                _wait_answers(page, n)
            # The second answer's details open: its cost, how its search ran, the trace link.
            page.locator(".msg.assistant").nth(1).locator(".answer-details summary").click()
            page.wait_for_selector(".msg.assistant >> nth=1 >> .trace-link")
            if shared_id is None:
                page.click("#share")
                page.wait_for_selector("#share-box:not([hidden]) a")
                shared_id = page.get_attribute("#share-link", "href").rsplit("/", 1)[1]
            else:  # the 390 px conversation is shared too, so the page shows the link and its copy button
                page.click("#share")
                page.wait_for_selector("#share-box:not([hidden]) a")
            shot(page, f"chat-signed-in-{width}")
            if w < 992:  # narrow: the conversations are a drawer
                page.evaluate("window.scrollTo(0, 0)")
                page.click("#past-toggle")
                page.wait_for_selector("#past-panel.open")
                path = out / f"chat-conversations-{width}.png"
                say(f"screenshot {path.name}")
                page.screenshot(path=str(path))
                written.append(path)
                page.keyboard.press("Escape")
            runs = context.new_page()  # the chat tab lends it the sign-in
            runs.goto(f"{url}/chat/runs?context=guidelines-axe")
            runs.wait_for_selector("#rows tr")
            shot(runs, f"runs-{width}")
            first, second = runs.locator("#rows tr th a").nth(0).inner_text(), runs.locator("#rows tr th a").nth(1).inner_text()
            runs.goto(f"{url}/chat/runs?run={first}")
            runs.wait_for_selector("#run-facts dl")
            shot(runs, f"run-{width}")
            runs.goto(f"{url}/chat/runs?run={first}&compare={second}")
            runs.wait_for_selector("#compared-rows tr")
            shot(runs, f"compare-{width}")
            trace = page.get_attribute(".msg.assistant >> nth=1 >> .trace-link a", "href")
            runs.goto(f"{url}{trace}")
            runs.wait_for_selector("#steps table")
            shot(runs, f"trace-{width}")
            outsider = browser.new_context(viewport={"width": w, "height": h}).new_page()
            outsider.goto(f"{url}/chat/runs?context=guidelines-axe")
            outsider.wait_for_selector("#sign-in:not([hidden])")
            shot(outsider, f"runs-signed-out-{width}")
            outsider.goto(f"{url}/chat/shared/{shared_id}")
            outsider.wait_for_selector(".msg.assistant")
            shot(outsider, f"shared-{width}")
            outsider.context.close()
            context.close()
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-search", action="store_true", help="no search index: data tools only")
    parser.add_argument("--serve", action="store_true", help="serve the app until Ctrl-C instead of taking screenshots")
    parser.add_argument("--widths", default=",".join(WIDTHS), help=f"comma-separated, of {', '.join(VIEWPORTS)}")
    args = parser.parse_args(argv)
    unknown = [w for w in args.widths.split(",") if w not in VIEWPORTS]
    if unknown:
        parser.error(f"unknown width(s) {unknown}: use {', '.join(VIEWPORTS)}")
    _isolate()
    from moto import mock_aws

    with mock_aws():
        server, thread, url = _serve(build_app(search=not args.no_search))
        try:
            if args.serve:
                print(f"serving {url}/chat (Ctrl-C stops it)", flush=True)
                while True:
                    time.sleep(3600)
            for path in take(url, args.out, {w: VIEWPORTS[w] for w in args.widths.split(",")}):
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
        except KeyboardInterrupt:
            pass
        finally:
            server.should_exit = True
            thread.join(5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
