"""One table of cases, run against all four doors of the same chat: our SSE frames, the JSON answer,
the AI SDK's UI message stream and MCP. A behaviour that holds at one door and not at another is a
red test.

Each case says what every door shows (`Outcome`: the HTTP status, the code a client reads, how the
answer ended). Where a door says the same thing in its own way (the JSON answer has one status for
the whole answer; MCP says a refused call in its result), `differs` gives that door's outcome and
why. Where a door cannot express a case at all, `cannot` says why, and the table's own test holds
every cell to one of the three: an outcome, a stated difference, a stated reason. The app is served
by uvicorn on 127.0.0.1 (MCP and a stop need a real server); the store is moto.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.models.failures import ModelFailure
from groundchat.tools.base import Tool
from groundchat_cli.serving import Servers
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import TEST_TOOLS, parse_sse
from tests.chat_function.test_reconnect_and_stop import GatedModel, gated_tool
from tests.mcp_server.conftest import Served as McpServed

QUESTION = "Which context level is best?"
# alice may do everything here; nobody may only read traces (neither chat nor read runs).
GRANTS = {"alice": [CHAT_USE, RUNS_READ, DOCS_READ], "bob": [CHAT_USE, RUNS_READ, DOCS_READ], "nobody": [TRACES_READ]}
DOORS = ("sse", "json", "ai-sdk", "mcp")


@dataclass(frozen=True)
class Outcome:
    status: int  # the HTTP status the door answered with
    code: str | None = None  # the refusal's or the failure's code, as the door's client reads it
    done: str | None = None  # how the answer ended (the `done` frame's reason); None: no answer ran


@dataclass(frozen=True)
class Case:
    name: str
    expected: Outcome
    # Doors that say the same behaviour in their own way: door -> (its outcome, why it differs).
    differs: dict[str, tuple[Outcome, str]] = field(default_factory=dict)
    # Doors that cannot express the case: door -> why.
    cannot: dict[str, str] = field(default_factory=dict)


NO_CONVERSATION = "an MCP call belongs to no conversation: each call is a run of its own"
NO_QUESTION = ("MCP carries tool calls, not questions: the host's own model decides what to ask, so there is no question "
               "of ours to decline (and every tool MCP lists is read-only, tests/mcp_server/test_mcp_http.py)")
NO_MODEL = "no model of ours runs in an MCP call: the host's model is its own; a failing tool is the case MCP shares"
NO_STEP = ("an MCP call is one tool run with no step boundary: there is no answer in progress for /stop to end "
           "(a host cancels its own request)")

CASES = [
    Case("no caller", Outcome(401, "unauthenticated")),
    Case("caller not allowed", Outcome(403, "forbidden"),
         differs={"mcp": (Outcome(200, "forbidden"), "a host may connect without chat.use; the tool the caller may not use "
                                                       "is refused in the call's result, and the session goes on")}),
    Case("someone else's conversation", Outcome(404, "not-found"), cannot={"mcp": NO_CONVERSATION}),
    Case("off-topic question", Outcome(200, "off-topic", "complete"), cannot={"mcp": NO_QUESTION}),
    Case("change request", Outcome(200, "change-refused", "complete"), cannot={"mcp": NO_QUESTION}),
    Case("spend cap reached", Outcome(429, "spend-cap"),
         differs={"mcp": (Outcome(200, "spend-cap"), "a cap reached is said in the call's result: the host's session goes on")}),
    Case("model failure", Outcome(200, "gateway", "error"),
         differs={"json": (Outcome(502, "gateway", "error"), "the JSON answer has one status for the whole answer: the failure's")},
         cannot={"mcp": NO_MODEL}),
    Case("a tool fails", Outcome(200, "tool-failed", "complete"),
         differs={"mcp": (Outcome(200, "tool-failed"), "the call is the whole exchange: no answer goes on after it")}),
    Case("the reader stops mid-answer", Outcome(200, None, "stopped"), cannot={"mcp": NO_STEP}),
]


def expected_at(case: Case, door: str) -> Outcome:
    return case.differs[door][0] if door in case.differs else case.expected


def cells() -> list:
    return [pytest.param(case, door, id=f"{case.name}-{door}",
                         marks=[pytest.mark.skip(reason=f"{door} cannot express this: {case.cannot[door]}")] if door in case.cannot else [])
            for case in CASES for door in DOORS]


def test_every_cell_of_the_table_is_an_outcome_a_stated_difference_or_a_stated_reason():
    assert {c.name for c in CASES} >= {"off-topic question", "change request", "spend cap reached", "model failure",
                                       "the reader stops mid-answer"}
    for case in CASES:
        assert set(case.differs) | set(case.cannot) <= set(DOORS), case.name
        assert not set(case.differs) & set(case.cannot), case.name
        assert all(why.strip() for _, why in case.differs.values()) and all(why.strip() for why in case.cannot.values())
        # A case no door but one can express is no shared case.
        assert len(DOORS) - len(case.cannot) >= 3, case.name


# -- the world each case runs in -----------------------------------------------------------------

class Nothing(BaseModel):
    pass


async def _broken(_ctx, _args):
    raise RuntimeError("the index is on fire")


async def _priced(ctx, _args):
    """Charged like a search (the same SearchCharge and caps) before it answers."""
    await ctx.charge_search("contrast")
    return {"outcome": "hit"}


BROKEN = Tool(name="top_rules", description="fails", input_model=Nothing, permission=RUNS_READ, handler=_broken,
              grounding="figures", drawer="rule-counts", offline_template="rule-counts")
PRICED = Tool(name="search_docs", description="charged", input_model=Nothing, permission=DOCS_READ, handler=_priced,
              grounding="text", drawer="excerpts", offline_template="excerpts")
TOOLS = [*TEST_TOOLS, BROKEN, PRICED]


@pytest.fixture
def served():
    servers = Servers()
    yield servers.serve
    servers.stop_all()


@dataclass
class World:
    env: object
    url: str

    def headers(self, user: str | None) -> dict[str, str]:
        return self.env.token(user) if user else {}


def _world(make_env, served, model, tools=TOOLS) -> World:
    env = make_env(model, tools=tools, grants=GRANTS)
    return World(env, served(env.app))


def _scripted(case: Case):
    if case.name == "model failure":
        return ScriptedModel([Step(text="Let me look", raise_error=ModelFailure("gateway", "HTTP 500: upstream"))])
    if case.name == "a tool fails":
        return ScriptedModel([Step(tool_calls=[("top_rules", {})]), Step(text="Its data is down; try again later.")])
    return ScriptedModel([Step(text="Full context.")], repeat_last=True)


# -- the doors: a question asked, and what came back, as an Outcome --------------------------------

def _body(door: str, question: str, conversation_id: str | None) -> dict:
    if door == "ai-sdk":
        return {"id": conversation_id or "a" * 32, "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": question}]}]}
    return {"message": question, "stream": door == "sse", **({"conversation_id": conversation_id} if conversation_id else {})}


def _path(door: str) -> str:
    return "/api/ai-sdk/chat" if door == "ai-sdk" else "/api/chat"


def ask(world: World, door: str, user: str | None, question: str = QUESTION, conversation_id: str | None = None) -> Outcome:
    with httpx.Client(base_url=world.url, headers=world.headers(user), timeout=60) as client:
        r = client.post(_path(door), json=_body(door, question, conversation_id))
    return read(door, r)


def read(door: str, r: httpx.Response) -> Outcome:
    """What the door said, in the table's words: a refusal's code, else the failure's, else a
    failed tool's (`tool-failed`), else how an answer that called no tool declined (DECLINING)."""
    if r.status_code != 200 and door != "json" or (door == "json" and "done" not in r.json()):
        return Outcome(r.status_code, r.json()["error"]["code"])
    if door == "json":
        answer = r.json()
        code = answer["error"]["failure_kind"] if answer["error"] else _tool_failed(answer["tool_calls"], answer["message"])
        return Outcome(r.status_code, code, answer["done"])
    if door == "sse":
        frames = parse_sse(r.text)
        errors = [d["code"] for k, d in frames if k == "error"]
        calls = [{"outcome": "error" if d.get("error") else "ok"} for k, d in frames if k == "tool-result"]
        text = "".join(d["text"] for k, d in frames if k == "text")
        return Outcome(r.status_code, errors[0] if errors else _tool_failed(calls, text), frames[-1][1]["reason"])
    parts = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    errors = [p["data"]["code"] for p in parts if p["type"] == "data-error"]
    calls = [{"outcome": "error"} for p in parts if p["type"] == "tool-output-error"] + \
            [{"outcome": "ok"} for p in parts if p["type"] == "tool-output-available"]
    text = "".join(p["delta"] for p in parts if p["type"] == "text-delta")
    finish = parts[-1]
    assert finish["type"] == "finish" and r.text.endswith("data: [DONE]\n\n")
    if errors:
        assert any(p["type"] == "error" for p in parts)  # the SDK's own error, after the cost
    if finish["messageMetadata"]["done"] == "stopped":
        assert parts[-2]["type"] == "abort"  # the SDK's own word for a stop
    return Outcome(r.status_code, errors[0] if errors else _tool_failed(calls, text), finish["messageMetadata"]["done"])


# How the answerer declines (offline/templates), each kind by its own words.
DECLINING = {"off-topic": "This question is outside that", "change-refused": "cannot change, delete, rename, run or re-grade"}


def _tool_failed(calls: list[dict], text: str) -> str | None:
    if any(c["outcome"] == "error" for c in calls):
        return "tool-failed"
    declined = [code for code, words in DECLINING.items() if words in text]
    return declined[0] if declined and not calls else None


async def call_mcp(world: World, user: str | None, tool: str) -> Outcome:
    """One tool call through the MCP SDK's own client, or the bare POST a host without a token makes."""
    if user is None:
        async with httpx.AsyncClient(base_url=world.url, timeout=30) as client:
            r = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                  headers={"accept": "application/json, text/event-stream"})
        return Outcome(r.status_code, "unauthenticated" if r.status_code == 401 else None)
    async with McpServed(world.url, world.env.services).session(user) as session:
        result = await session.call_tool(tool, {})
    if not result.is_error:
        return Outcome(200)
    said = result.content[0].text
    code = ("forbidden" if "not available to this caller" in said else
            "spend-cap" if said.startswith("error: spend-cap:") else
            "tool-failed" if said.startswith("error: tool-failed:") else said)
    return Outcome(200, code)


# -- the cases ------------------------------------------------------------------------------------

CASE_TOOL = {"no caller": "compare_contexts", "caller not allowed": "compare_contexts", "spend cap reached": "search_docs",
             "a tool fails": "top_rules"}
CASE_USER = {"no caller": None, "caller not allowed": "nobody"}
QUESTIONS = {"off-topic question": "What is a good recipe for banana bread?",
             "change request": "Please delete the run with the most violations."}


@pytest.mark.parametrize(("case", "door"), cells())
async def test_the_case_holds_at_the_door(case, door, make_env, served, tmp_path):
    if case.name == "the reader stops mid-answer":
        got = _stopped(make_env, served, door)
    elif case.name in QUESTIONS:
        from groundchat.offline.answerer import OfflineAnswerer
        from groundchat.tools.data_tools import DATA_TOOLS

        world = _world(make_env, served, OfflineAnswerer(), tools=list(DATA_TOOLS))
        got = ask(world, door, "alice", QUESTIONS[case.name])
        _assert_nothing_charged(world)
    else:
        world = _world(make_env, served, _scripted(case))
        if case.name == "spend cap reached":
            _no_room(world)
        if case.name == "someone else's conversation":
            got = ask(world, door, "bob", conversation_id=_first_answer(world, "alice"))
        elif door == "mcp":
            got = await call_mcp(world, CASE_USER.get(case.name, "alice"), CASE_TOOL[case.name])
        else:
            got = ask(world, door, CASE_USER.get(case.name, "alice"))
        if case.name in ("no caller", "caller not allowed", "spend cap reached"):
            assert world.env.model.calls == 0  # refused before any model call
            _assert_nothing_charged(world)
    assert got == expected_at(case, door), (case.name, door)


def _assert_nothing_charged(world: World) -> None:
    from groundchat.store.tables import USAGE
    from groundchat.store.usage import all_rows_sync

    rows = all_rows_sync(world.env.services.dynamo.client, world.env.services.dynamo.name(USAGE))
    assert sum((Decimal(str(r["charged"])) for r in rows), Decimal(0)) == 0


def _no_room(world: World) -> None:
    """Priced, with less room than any step or search can cost."""
    settings = world.env.services.settings
    Path(settings.prices_file).write_text(json.dumps({"scripted": {"input_per_mtok": "1.00", "output_per_mtok": "2.00"}}))
    settings.rerank = "bedrock:amazon.rerank-v1:0"  # $0.001 a search (spending/prices.py)
    settings.user_budget_usd = Decimal("0.0001")


def _first_answer(world: World, user: str) -> str:
    """The id of a conversation `user` has just had one answer in."""
    with httpx.Client(base_url=world.url, headers=world.headers(user), timeout=30) as client:
        answer = client.post("/api/chat", json={"message": QUESTION}).json()
    assert answer["done"] == "complete", answer
    return answer["conversation_id"]


def _stopped(make_env, served, door: str) -> Outcome:
    """A conversation with one answer; the next question's answer is stopped while its tool runs."""
    model = GatedModel([Step(text="First answer."), Step(tool_calls=[("compare_contexts", {})]), Step(text="never said")])
    gate = threading.Event()
    world = _world(make_env, served, model, tools=[gated_tool(gate)])
    model.release(0)
    conversation_id = _first_answer(world, "alice")
    model.release(1)
    out: dict = {}

    def asking() -> None:
        with httpx.Client(base_url=world.url, headers=world.headers("alice"), timeout=60) as client:
            out["response"] = client.post(_path(door), json=_body(door, "And the cost?", conversation_id))

    thread = threading.Thread(target=asking, daemon=True)
    thread.start()
    with httpx.Client(base_url=world.url, headers=world.headers("alice"), timeout=30) as page:
        for _ in range(400):
            r = page.get(f"/api/conversations/{conversation_id}/answer")
            if r.status_code == 200 and r.json()["state"] == "running":
                if page.post(f"/api/conversations/{conversation_id}/stop").status_code == 202:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the answer never ran")
    gate.set()
    model.release(2)
    thread.join(60)
    assert model.calls == 2  # the step after the stop never ran
    return read(door, out["response"])
