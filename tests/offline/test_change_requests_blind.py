"""Requests to change the data, wherever they come in a conversation, on a set written blind before the
change check in conversations was changed (tests/eval/offline_change_requests_blind.jsonl): each must
get the change refusal and no tool; each look-alike that only reads must not."""
from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from groundchat.auth.callers import Caller
from groundchat.models.messages import Message, ModelRequest, TextDelta, ToolCallEvent
from groundchat.offline.answerer import DISCLAIMER, OfflineAnswerer
from groundchat.offline.router_changes import CHANGE_REFUSAL
from tests.corpus_support import REPO_ROOT
from tests.offline.test_follow_ups import _history, _names, _registry

SET = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / "offline_change_requests_blind.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]
CHANGES = [c for c in SET if c["kind"] == "change"]
LOOKALIKES = [c for c in SET if c["kind"] == "lookalike"]


async def _reply(answerer: OfflineAnswerer, conversation: dict[str, Any], registry, ctx) -> tuple[str | None, str]:
    """The first tool the answerer calls for the last question (None for none), and the text it writes."""
    messages = [*await _history(conversation["turns"], registry, ctx), Message(role="user", content=conversation["q"])]
    specs = [t.spec() for t in await registry.offered(ctx.caller)]
    events = [e async for e in answerer(ModelRequest(system="s", messages=messages, tools=specs))]
    calls = [e.name for e in events if isinstance(e, ToolCallEvent)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta)).removesuffix("\n\n" + DISCLAIMER)
    return (calls[0] if calls else None), text


def test_the_set_has_change_requests_at_every_position_and_look_alikes():
    assert len(CHANGES) == 22 and len(LOOKALIKES) == 11 and len({c["id"] for c in SET}) == len(SET)
    assert {len(c["turns"]) for c in CHANGES} == {0, 1, 2}
    assert all(c["tool"] == "none" for c in CHANGES) and all(c["tool"] != "none" for c in LOOKALIKES)


async def test_on_the_blind_set_every_change_request_is_refused_and_no_look_alike_is(dynamo, topic_margin, real_search):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin), nearness=real_search.nearness)
    registry = _registry()
    replies = {c["id"]: await _reply(answerer, c, registry, ctx) for c in SET}
    not_refused = [c["id"] for c in CHANGES if replies[c["id"]] != (None, CHANGE_REFUSAL)]
    refused_look_alikes = [c["id"] for c in LOOKALIKES if replies[c["id"]][1] == CHANGE_REFUSAL]
    right_tool = [c["id"] for c in LOOKALIKES if replies[c["id"]][0] == c["tool"]]
    print("blind change set: change requests refused", len(CHANGES) - len(not_refused), "of", len(CHANGES),
          "look-alikes refused as a change", len(refused_look_alikes), "of", len(LOOKALIKES),
          "look-alikes on the expected tool", len(right_tool), "of", len(LOOKALIKES))
    assert not_refused == [], not_refused
    assert refused_look_alikes == [], refused_look_alikes
