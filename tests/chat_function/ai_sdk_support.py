"""What the AI SDK stream tests share: the real `ai` package (a skip without npm, a failure under
CI=true), the app served on 127.0.0.1, and the SDK's own chat reading it (ai_sdk_reader.mjs)."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from groundchat_testkit import ai_sdk
from groundchat_cli.serving import serve_in_thread

READER = Path(__file__).with_name("ai_sdk_reader.mjs")
READ_SECONDS = 120


def require_ai_sdk(major: str = ai_sdk.CURRENT_MAJOR) -> ai_sdk.AiSdk:
    try:
        return ai_sdk.install(major)
    except ai_sdk.AiSdkMissing as missing:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI reads our stream with the AI SDK's own parser: {missing}")
        pytest.skip(str(missing))


def new_chat_id() -> str:
    """A chat id as the README tells useChat to make one: 128 random bits in hex."""
    return secrets.token_hex(16)


class Served:
    """Apps served on 127.0.0.1 for the test, stopped at its end."""

    def __init__(self) -> None:
        self._started: list = []

    def url(self, app) -> str:
        server, thread, url = serve_in_thread(app, name="ai-sdk-chat")
        self._started.append((server, thread))
        return url

    def stop(self) -> None:
        for server, thread in self._started:
            server.should_exit = True
            thread.join(5)


def read_with_sdk(sdk: ai_sdk.AiSdk, url: str, token: str | None, chat_id: str, questions: list[str], last_only: bool = False,
                  resume: bool = False) -> dict:
    """The chat the SDK built from our stream: one turn per question, as useChat sends them (the
    whole transcript each time, or with `last_only` only the last message, as the README has it)."""
    options = {"sdk": str(sdk.prefix), "api": f"{url}/api/ai-sdk/chat", "token": token, "chatId": chat_id, "questions": questions,
               "lastOnly": last_only, "resume": resume}
    done = subprocess.run([sdk.node, str(READER), json.dumps(options)], capture_output=True, text=True, timeout=READ_SECONDS)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def parts_of(message: dict, kind: str) -> list[dict]:
    return [p for p in message["parts"] if p["type"] == kind]


def text_of(message: dict) -> str:
    return "".join(p["text"] for p in parts_of(message, "text"))
