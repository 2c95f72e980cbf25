"""Images on the pages, in a real headless Chromium: attach a screenshot by the button (and by
dropping a file), give it an alt text, see it in the transcript as it is asked, again when the
conversation is reopened, and on the shared page; a chat whose model takes no images says why."""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from groundchat.attachments.storage import ImageStore
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import axe_violations, page_width
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

SONNET = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0"  # a model with a published image token bound
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "run-390.png"

# The drawn thumbnail's bytes, as the page holds them (a blob URL or the shared page's address).
THUMBNAIL_BYTES = """async (selector) => {
  const img = document.querySelector(selector);
  await img.decode();
  const r = await fetch(img.src);
  const bytes = new Uint8Array(await r.arrayBuffer());
  let s = ""; for (const b of bytes) s += String.fromCharCode(b);
  return {src: img.src, alt: img.alt, b64: btoa(s), natural: img.naturalWidth};
}"""


def test_an_attached_screenshot_is_drawn_live_reopened_and_shared(browser, served, settings, corpus_dir):
    ImageStore(settings).ensure_bucket()
    env, url = served(ScriptedModel([Step(text="The contrast of that button is too low.")], model_id=SONNET))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, url, env, "alice")
    page.wait_for_selector("#attach:not([hidden]) #attach-button")
    assert "Up to 5 images" in page.inner_text("#attach-hint")

    with page.expect_file_chooser() as chooser:
        page.click("#attach-button")
    chooser.value.set_files(str(SCREENSHOT))
    page.wait_for_selector("#pending li img")
    assert page.input_value("#alt-0") == "run-390.png"  # the file name until someone writes better
    page.fill("#alt-0", "The run page on a phone")
    assert not axe_violations(page, _axe_source(corpus_dir))
    page.set_viewport_size({"width": 320, "height": 900})
    assert page_width(page) <= 320
    page.set_viewport_size({"width": 1280, "height": 900})

    ask(page, "What does this page get wrong?")
    assert page.locator("#pending li").count() == 0
    live = page.evaluate(THUMBNAIL_BYTES, ".msg.user .attachments img")
    assert live["alt"] == "The run page on a phone" and live["natural"] > 0

    # Stored: the message names it by hash; the model was sent it with the alt text.
    asked = env.model.requests[0].messages[-1]
    assert [(i.media_type, i.alt) for i in asked.images] == [("image/png", "The run page on a phone")]
    sha = asked.images[0].sha256

    # Reopened: fetched with the sign-in and drawn from a blob URL.
    conversation = page.get_attribute("#past li", "data-id")
    page.click("#new")
    assert page.locator(".msg").count() == 0
    page.click("#past li .entry button")
    page.wait_for_selector(".msg.user .attachments img[src^='blob:']")
    reopened = page.evaluate(THUMBNAIL_BYTES, ".msg.user .attachments img")
    assert reopened["alt"] == "The run page on a phone"
    assert hashlib.sha256(base64.b64decode(reopened["b64"])).hexdigest() == sha

    # Shared: the dialog says the images go with it; the shared page draws them from its own route.
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    assert page.is_visible("#share-images")
    assert "images attached to its questions are shared" in page.inner_text("#share-box")
    shared = browser.new_page(viewport={"width": 390, "height": 900})
    shared.goto(f"{url}/chat/shared/{conversation}")
    shared.wait_for_selector(".msg.user .attachments img")
    seen = shared.evaluate(THUMBNAIL_BYTES, ".msg.user .attachments img")
    assert seen["src"].endswith(f"/api/shared/{conversation}/images/{sha}") and seen["alt"] == "The run page on a phone"
    assert hashlib.sha256(base64.b64decode(seen["b64"])).hexdigest() == sha
    assert "This page stays until" in shared.inner_text("header") and "when the conversation expires" in shared.inner_text("header")
    assert not axe_violations(shared, _axe_source(corpus_dir))
    assert page_width(shared) <= 390


def test_a_dropped_image_is_added_and_removable_and_limits_are_said(browser, served, settings):
    ImageStore(settings).ensure_bucket()
    env, url = served(ScriptedModel([Step(text="Fine.")], model_id=SONNET))
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.wait_for_selector("#attach:not([hidden]) #attach-button")
    png = base64.b64encode(SCREENSHOT.read_bytes()).decode()
    page.evaluate("""(b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const drop = new DataTransfer();
      drop.items.add(new File([bytes], "dropped.png", {type: "image/png"}));
      drop.items.add(new File(["not an image"], "notes.txt", {type: "text/plain"}));
      document.getElementById("ask").dispatchEvent(new DragEvent("drop", {dataTransfer: drop, bubbles: true, cancelable: true}));
    }""", png)
    assert page.locator("#pending li").count() == 1
    assert page.input_value("#alt-0") == "dropped.png"
    assert "notes.txt is not a PNG, JPEG, WebP or GIF image" in page.inner_text("#attach-note")
    page.focus("#pending li button")
    page.keyboard.press("Enter")
    assert page.locator("#pending li").count() == 0
    assert page.evaluate("document.activeElement.id") == "attach-button"


def test_a_model_without_images_says_why_instead_of_the_button(browser, served):
    env, url = served(ScriptedModel([Step(text="Fine.")]))  # the scripted default model has no image bound
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.wait_for_selector("#attach:not([hidden])")
    assert page.is_hidden("#attach-button")
    note = page.inner_text("#attach-note")
    assert note.startswith("Images cannot be attached here: ") and len(note) > 40
