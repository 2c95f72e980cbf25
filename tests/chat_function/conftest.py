"""An app on moto with a scripted model and small tools, and helpers to read its SSE."""
from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
import pytest
from pydantic import BaseModel

from groundchat.auth.tokens import issue_dev_token
from groundchat.auth.callers import CHAT_USE, RUNS_READ, TRACES_READ
from groundchat.services import Services
from groundchat_testkit.scripted import ScriptedModel
from groundchat.tools.base import Tool


class Filter(BaseModel):
    context: str = "all"


async def fake_compare(ctx, args):
    return {"rows": [{"model": "m1", "context": args.context, "mean_violations": 3.5, "cost_text": "$0.0126"}]}


TEST_TOOLS = [Tool(name="compare_contexts", grounding="figures", drawer="contexts", offline_template="contexts", description="compare", input_model=Filter, permission=RUNS_READ, handler=fake_compare)]


@dataclass
class AppEnv:
    services: Services
    model: ScriptedModel
    app: object
    settings: object

    def token(self, user: str) -> dict[str, str]:
        return {"authorization": f"Bearer {issue_dev_token(self.settings, user)}"}

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://test")


# A question that wants the SSE stream asks for it: without, the chat answers one JSON document.
ASKS_FOR_THE_STREAM = {"accept": "text/event-stream"}


def parse_sse(text: str) -> list[tuple[str, dict]]:
    frames = []
    for block in text.strip().split("\n\n"):
        if not block.strip() or all(line.startswith(":") for line in block.splitlines() if line):
            continue  # a heartbeat comment
        event = next(line[7:] for line in block.splitlines() if line.startswith("event: "))
        data = "".join(line[6:] for line in block.splitlines() if line.startswith("data: "))
        frames.append((event, json.loads(data)))
    return frames


@pytest.fixture
def make_env(dynamo, settings):
    from chat_function.app import create_app

    def make(model: ScriptedModel, grants: dict[str, list[str]] | None = None, tools=None) -> AppEnv:
        services = Services(settings=settings, dynamo=dynamo, model_override=model,
                            tools_override=TEST_TOOLS if tools is None else tools)
        for user, perms in (grants or {"alice": [CHAT_USE, RUNS_READ, TRACES_READ], "bob": [CHAT_USE, RUNS_READ, TRACES_READ]}).items():
            services.users.table.put_item(Item={"user_id": user, "grants": set(perms)})
        return AppEnv(services=services, model=model, app=create_app(services), settings=settings)

    return make
