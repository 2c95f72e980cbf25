"""A client of the running app: `groundchat try` and `groundchat examples`."""
from __future__ import annotations

import json
import sys
from typing import Any, Iterator

import httpx

EXAMPLES = [
    "Which context level is best, and what does it cost?",
    "What do agents get wrong most often?",
    "Why does color-contrast matter?",
    "What does the European Accessibility Act require of e-commerce services?",
]


def _token(user: str | None) -> tuple[str, str]:
    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import get_settings

    settings = get_settings()
    user = user or settings.dev_user
    return user, issue_dev_token(settings, user, days=1)


def stream_frames(client: httpx.Client, url: str, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    with client.stream("POST", f"{url}/api/chat", json=body, headers={"accept": "text/event-stream"}, timeout=300) as resp:
        if resp.status_code != 200:
            resp.read()
            raise RuntimeError(f"HTTP {resp.status_code}: {resp.text}")
        event = "message"
        data: list[str] = []
        for line in resp.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                yield event, json.loads("".join(data))
                event, data = "message", []


def ask(client: httpx.Client, url: str, question: str, conversation_id: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": question}
    if conversation_id:
        body["conversation_id"] = conversation_id
    answer = {"conversation_id": conversation_id, "tools": [], "text": "", "citations": None, "done": None, "errors": []}
    for event, data in stream_frames(client, url, body):
        if event == "start":
            answer["conversation_id"] = data["conversation_id"]
            answer["run_id"] = data["run_id"]
        elif event == "tool-call":
            answer["tools"].append(data["name"])
        elif event == "text":
            answer["text"] += data["text"]
        elif event == "citations":
            answer["citations"] = data
        elif event in ("error", "limit"):
            answer["errors"].append(data.get("message"))
        elif event == "done":
            answer["done"] = data["reason"]
    return answer


def print_answer(n: int, question: str, answer: dict[str, Any]) -> None:
    print(f"── Q{n}: {question}")
    print(f"tools: {', '.join(answer['tools']) or '(none)'}")
    print(answer["text"].strip() or "(no text)")
    for err in answer["errors"]:
        print(f"! {err}")
    cites = answer["citations"] or {}
    sources, unverified = cites.get("sources", []), cites.get("unverified", [])
    if not sources and not unverified:
        print("citations: none")
    for s in sources:
        print(f"citation [{s['ref']}] verified: a tool returned {s.get('source')} {s.get('section')} ({s.get('url')})")
    for item in unverified:
        ref = item["ref"] if isinstance(item, dict) else item
        print(f"citation [{ref}] UNVERIFIED: no tool in this answer returned it")
    print(f"done: {answer['done']}   conversation: {answer['conversation_id']}\n")


def failure_line(url: str, exc: Exception) -> str:
    """One line for a request that did not get an answer."""
    if isinstance(exc, httpx.TransportError):
        return f"error: the app at {url} does not answer ({exc}): is the local stack running, or still starting? (`make run`)"
    return f"error: {exc}"


def ask_all(url: str, user: str | None, questions: list[str]) -> int:
    _, token = _token(user)
    conversation_id = None
    with httpx.Client(headers={"authorization": f"Bearer {token}"}) as client:
        print_answerer_notice(client, url)
        for n, question in enumerate(questions, 1):
            answer = _answered(client, url, n, question, conversation_id)
            if answer is None:
                return 1
            conversation_id = answer["conversation_id"]
    return 0


def print_answerer_notice(client: httpx.Client, url: str) -> None:
    """Before the first question, what the app says of the offline answerer when it is the one
    answering (GET /api/chat/status); nothing when the app cannot say."""
    try:
        notice = client.get(f"{url}/api/chat/status").json().get("answerer_notice")
    except (httpx.HTTPError, ValueError, AttributeError):
        return
    if notice:
        print(notice + "\n")


def _answered(client: httpx.Client, url: str, n: int, question: str, conversation_id: str | None) -> dict | None:
    """Asks and prints the answer; None (with one line said) when there is none."""
    try:
        answer = ask(client, url, question, conversation_id)
    except (RuntimeError, httpx.HTTPError) as exc:
        print(failure_line(url, exc), file=sys.stderr)
        return None
    print_answer(n, question, answer)
    return answer


def run_examples(url: str, user: str | None) -> int:
    _, token = _token(user)
    with httpx.Client(headers={"authorization": f"Bearer {token}"}) as client:
        for n, question in enumerate(EXAMPLES, 1):
            answer = _answered(client, url, n, question, None)
            if answer is None:
                return 1
            resp = client.post(f"{url}/api/conversations/{answer['conversation_id']}/share")
            if resp.status_code == 200:
                print(f"shared: {url}{resp.json()['share_url']}\n")
            else:
                print(f"could not share: HTTP {resp.status_code}", file=sys.stderr)
    return 0
