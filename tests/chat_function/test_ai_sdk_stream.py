"""The AI SDK's own chat (the `ai` package from the npm registry: AbstractChat over its
DefaultChatTransport, what useChat wraps) reads `/api/ai-sdk/chat` served on 127.0.0.1, and the
message it builds holds our answer: text, tool parts with input and output, verified refs as
source parts and never an unverified one, views and cost as data parts; a failure as its error, a
cap reached mid-answer as a limit note on an answer that still finishes."""
from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ
from groundchat.auth.tokens import issue_dev_token
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_testkit.ai_sdk import AI_VERSIONS
from tests.chat_function.ai_sdk_support import Served, new_chat_id, parts_of, read_with_sdk, require_ai_sdk, text_of


# The current major and the one before it: a front end on either reads the same stream.
@pytest.fixture(scope="module", params=sorted(AI_VERSIONS, reverse=True), ids=lambda major: f"ai{major}")
def sdk(request):
    return require_ai_sdk(request.param)


@pytest.fixture
def served():
    started = Served()
    yield started
    started.stop()


def token(env, user: str) -> str:
    return issue_dev_token(env.settings, user)


def test_the_sdk_reads_an_offline_answer_its_tools_view_and_cost_and_the_history_stays_ours(sdk, served, make_env, dynamo):
    from groundchat.offline.answerer import OfflineAnswerer
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.view_tool import show_view
    from tests.moto_snapshot import sample_loaded

    sample_loaded(dynamo)
    env = make_env(OfflineAnswerer(), tools=[*DATA_TOOLS, show_view], grants={"vera": [CHAT_USE, RUNS_READ, "views.show"]})
    chat_id = new_chat_id()
    read = read_with_sdk(sdk, served.url(env.app), token(env, "vera"), chat_id,
                         ["Which context level is best, and what does it cost?", "What do agents get wrong most often?"])

    first, second = read["turns"]
    assert (first["status"], first["error"]) == ("ready", None)
    message = first["message"]
    assert message["metadata"]["conversation_id"] == chat_id and message["metadata"]["done"] == "complete"
    assert message["id"] == message["metadata"]["run_id"] and len(message["id"]) == 32
    assert "offline answerer" in text_of(message)
    [compare] = parts_of(message, "tool-compare_contexts")
    assert compare["state"] == "output-available" and compare["toolCallId"]
    assert isinstance(compare["input"], dict) and compare["output"]["rows"]
    assert {row["context"] for row in compare["output"]["rows"]} >= {"none", "checklist"}
    [view] = parts_of(message, "data-view")
    assert view["data"]["title"] == "Context levels compared"
    [cost] = parts_of(message, "data-cost")
    assert cost["data"] == {"cost": "0", "cost_text": "$0.00", "run_id": message["id"]}  # the offline answerer costs nothing
    assert first["chunks"][0] == "start" and first["chunks"][-1] == "finish"

    # The second turn: the SDK posted the whole transcript; the history the answer used is the store's.
    assert second["status"] == "ready" and second["message"]["metadata"]["conversation_id"] == chat_id
    [history] = parts_of(second["message"], "data-history")
    assert history["data"]["outcome"] == "unchanged" and history["data"]["tokens"] > 0
    assert parts_of(second["message"], "tool-top_rules")[0]["state"] == "output-available"
    stored = asyncio.run(env.services.conversations.get_owned(chat_id, "vera"))
    assert stored is not None and int(stored["message_count"]) == 4  # two questions, two answers
    assert [m["role"] for m in read["messages"]] == ["user", "assistant", "user", "assistant"]


class Query(BaseModel):
    query: str


async def passages(ctx, args):
    return {"outcome": "hit", "passages": [
        {"ref": "0a1b2c3d", "source": "wcag", "section": "2.4.7 Focus Visible", "title": "Focus Visible",
         "url": "https://example.org/wcag#focus-visible", "text": "Any keyboard operable interface has a visible focus."},
        {"ref": "1b2c3d4e", "source": "docs", "section": "Keyboard", "title": "", "url": "", "text": "Tab moves focus."},
    ]}


async def broken(ctx, args):
    raise RuntimeError("the index is on fire")


DOC_TOOLS = [Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission=DOCS_READ, handler=passages),
             Tool(name="explain_rule", grounding="text", drawer="rule", offline_template="rule", description="rule", input_model=Query, permission=DOCS_READ, handler=broken)]


def test_verified_refs_become_source_parts_an_unverified_one_never_and_a_failed_tool_is_an_output_error(sdk, served, make_env):
    model = ScriptedModel([
        Step(tool_calls=[("search_docs", {"query": "focus"}), ("explain_rule", {"query": "focus-order"})]),
        Step(text="Focus must be visible [0a1b2c3d]; Tab moves it [1b2c3d4e]; and so says [deadbeef]."),
    ])
    env = make_env(model, tools=DOC_TOOLS, grants={"dora": [CHAT_USE, DOCS_READ]})
    read = read_with_sdk(sdk, served.url(env.app), token(env, "dora"), new_chat_id(), ["What does WCAG say about focus?"])

    [turn] = read["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    message = turn["message"]
    assert parts_of(message, "source-url") == [{"type": "source-url", "sourceId": "0a1b2c3d",
                                                "url": "https://example.org/wcag#focus-visible", "title": "Focus Visible"}]
    assert parts_of(message, "source-document") == [{"type": "source-document", "sourceId": "1b2c3d4e",
                                                     "mediaType": "text/plain", "title": "Keyboard"}]
    sources = [p["sourceId"] for p in message["parts"] if p["type"].startswith("source-")]
    assert "deadbeef" not in sources
    [citations] = parts_of(message, "data-citations")
    assert citations["data"]["unverified"] == [{"ref": "deadbeef", "status": "unverified"}] and citations["data"]["verified"] == 2
    [search] = parts_of(message, "tool-search_docs")
    assert search["input"] == {"query": "focus"} and search["output"]["passages"][0]["ref"] == "0a1b2c3d"
    [failed] = parts_of(message, "tool-explain_rule")
    assert failed["state"] == "output-error" and failed["input"] == {"query": "focus-order"}
    assert failed["errorText"].startswith("tool-failed: explain_rule could not run")
    assert "on fire" not in failed["errorText"]  # the exception's own words stay in the trace
    assert text_of(message) == "Focus must be visible [0a1b2c3d]; Tab moves it [1b2c3d4e]; and so says [deadbeef]."
    # Two model steps, the first only calling tools: each a start-step ... finish-step pair, and the
    # SDK marks where each starts in the message it builds.
    assert [c for c in turn["chunks"] if c.endswith("-step")] == ["start-step", "finish-step", "start-step", "finish-step"]
    kinds = [p["type"] for p in message["parts"]]
    assert kinds.count("step-start") == 2
    second = kinds.index("step-start", kinds.index("step-start") + 1)
    assert kinds.index("tool-search_docs") < second < kinds.index("text")  # the tools in the first step, the words in the second


def test_a_model_failure_reaches_the_sdk_as_its_error_after_the_text_and_the_cost(sdk, served, make_env):
    model = ScriptedModel([Step(text="Let me look that up", raise_error=ConnectionError("upstream went away"))])
    env = make_env(model)
    read = read_with_sdk(sdk, served.url(env.app), token(env, "alice"), new_chat_id(), ["Which context is best?"])

    [turn] = read["turns"]
    assert turn["status"] == "error"
    message = turn["message"]
    [failure] = parts_of(message, "data-error")
    assert turn["error"] == failure["data"]["message"] and failure["data"]["code"]
    assert text_of(message) == "Let me look that up"  # what was said before the failure stays
    assert parts_of(message, "data-cost")  # sent before the error, which ends the SDK's reading
    assert "upstream went away" not in turn["error"]


def test_a_refusal_is_the_sdks_error_with_our_typed_body(sdk, served, make_env):
    env = make_env(ScriptedModel([Step(text="First answer."), Step(text="Second answer.")]))
    url = served.url(env.app)
    chat_id = new_chat_id()
    unsigned = read_with_sdk(sdk, url, None, chat_id, ["Anyone there?"])
    # As the README configures the transport: only the last message is sent.
    owned = read_with_sdk(sdk, url, token(env, "alice"), chat_id, ["Which context is best?", "And the cost?"], last_only=True)
    foreign = read_with_sdk(sdk, url, token(env, "bob"), chat_id, ["And now mine?"])
    short_id = read_with_sdk(sdk, url, token(env, "bob"), "aBc123", ["A default id?"])

    assert unsigned["turns"][0]["status"] == "error" and '"code":"unauthenticated"' in unsigned["turns"][0]["error"]
    assert [(t["status"], text_of(t["message"])) for t in owned["turns"]] == [("ready", "First answer."), ("ready", "Second answer.")]
    assert [m.content for m in env.model.requests[1].messages] == ["Which context is best?", "First answer.", "And the cost?"]
    assert foreign["turns"][0]["status"] == "error" and '"code":"not-found"' in foreign["turns"][0]["error"]
    assert "32 lowercase hex digits" in short_id["turns"][0]["error"]
    assert env.model.calls == 2


def test_a_cap_reached_mid_answer_is_a_limit_part_and_the_answer_still_finishes(sdk, served, dynamo, monkeypatch, tmp_path):
    from decimal import Decimal

    from chat_function.app import create_app
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.services import Services
    from groundchat.spending.budget_guard import BudgetGuard
    from tests.spending.helpers import first_request, lookup, registry

    prices = tmp_path / "prices.json"
    prices.write_text('{"scripted": {"input_per_mtok": "1.00", "output_per_mtok": "2.00"}}')
    for name, value in {"GROUNDCHAT_PRICES_FILE": str(prices), "GROUNDCHAT_MODEL": "scripted",
                        "GROUNDCHAT_BUDGET_USD": "1", "GROUNDCHAT_BUDGET_PERIOD": "total"}.items():
        monkeypatch.setenv(name, value)
    reset_settings_cache()
    question = "How do the contexts compare?"
    probe = asyncio.run(first_request(registry(), "ann", question, 3000))
    guard = BudgetGuard(dynamo, get_settings(), "ann", "c", "r", "scripted")
    first_worst, tokens = guard.step_worst_case(probe)
    # Room for the first step and the answering step: the first two steps run, the third has none.
    monkeypatch.setenv("GROUNDCHAT_USER_BUDGET_USD", str(first_worst + guard.answering_worst_case(probe, tokens)[0] + Decimal("0.0001")))
    reset_settings_cache()
    settings = get_settings()
    model = ScriptedModel([Step(tool_calls=[("lookup", {})], output_tokens=2900), Step(tool_calls=[("lookup", {})], output_tokens=2900),
                           Step(text="never reached")], model_id="scripted")
    services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=[lookup])
    services.users.table.put_item(Item={"user_id": "ann", "grants": {CHAT_USE, RUNS_READ}})
    read = read_with_sdk(sdk, served.url(create_app(services)), issue_dev_token(settings, "ann"), new_chat_id(), [question])

    [turn] = read["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    message = turn["message"]
    assert message["metadata"]["done"] == "spend-cap" and model.calls == 2
    [limit] = parts_of(message, "data-limit")
    assert limit["data"]["scope"] == "user" and limit["data"]["message"]
    assert [p["state"] for p in parts_of(message, "tool-lookup")] == ["output-available"] * 2
    assert parts_of(message, "data-cost")[0]["data"]["cost"] == "0.0118"  # two steps of 100 in, 2,900 out
    assert turn["chunks"][-1] == "finish"


class Nothing(BaseModel):
    pass


async def slow_lookup(ctx, args):
    await asyncio.sleep(1.0)
    return {"rows": [{"model": "m1", "mean_violations": 3.5}]}


def test_the_heartbeat_comments_pass_the_sdks_parser(sdk, served, make_env, settings, monkeypatch):
    import httpx

    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.1)
    slow = Tool(name="slow_lookup", grounding="figures", drawer="plain", offline_template="generic", description="slow", input_model=Nothing, permission=RUNS_READ, handler=slow_lookup)
    env = make_env(ScriptedModel([Step(tool_calls=[("slow_lookup", {})]), Step(text="Model m1 had 3.5 violations.")] * 2), tools=[slow])
    url = served.url(env.app)
    body = {"id": new_chat_id(), "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "How slow?"}]}]}
    raw = httpx.post(f"{url}/api/ai-sdk/chat", json=body, headers=env.token("alice"), timeout=30)
    read = read_with_sdk(sdk, url, token(env, "alice"), new_chat_id(), ["How slow?"])

    assert ": ping\n\n" in raw.text and raw.text.endswith("data: [DONE]\n\n")
    assert raw.headers["x-vercel-ai-ui-message-stream"] == "v1"
    [turn] = read["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    assert text_of(turn["message"]) == "Model m1 had 3.5 violations."


def test_the_sdk_holds_a_tool_input_while_it_streams_then_the_whole_call_and_its_view(sdk, served, make_env):
    """A gateway's recorded stream writes the view's spec in pieces: the SDK's chat holds the input
    as it grows (what a UI draws meanwhile), then the whole call, its output and the accepted view."""
    from groundchat.tools.view_tool import show_view
    from tests.models.provider_recordings import OpenAIReplay
    from tests.models.tool_input_recordings import VIEW, figures_tool, openai_model, openai_view_answer, view_pieces

    env = make_env(openai_model(OpenAIReplay(*openai_view_answer())), tools=[figures_tool(), show_view],
                   grants={"vera": [CHAT_USE, RUNS_READ, "views.show"]})
    read = read_with_sdk(sdk, served.url(env.app), token(env, "vera"), new_chat_id(), ["Compare the context levels"])

    [turn] = read["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    chunks = turn["chunks"]
    # The figures' call (its "{}" in one piece), then the view's, piece by piece, each whole when made.
    figures = chunks.index("tool-input-start")
    assert chunks[figures:figures + 3] == ["tool-input-start", "tool-input-delta", "tool-input-available"]
    first = chunks.index("tool-input-start", figures + 1)
    last = chunks.index("tool-input-available", first)
    assert chunks[first + 1:last] == ["tool-input-delta"] * len(view_pieces())
    # While it streamed, the chat held the input parsed so far: the title before any part, then more
    # and more of the parts, never anything that is not in the final view.
    seen: list = []
    for held in turn["streamingInputs"]:
        if held["toolCallId"] == "call_view01" and held.get("input") is not None and (not seen or held["input"] != seen[-1]):
            seen.append(held["input"])
    assert len(seen) >= len(view_pieces()) // 2 and seen[-1] == VIEW
    titled = [s for s in seen if isinstance(s, dict) and s.get("title") == VIEW["title"]]
    assert titled and len(titled[0].get("parts") or []) < len(VIEW["parts"])
    [view_call] = parts_of(turn["message"], "tool-show_view")
    assert view_call["state"] == "output-available" and view_call["input"] == VIEW
    assert view_call["output"] == {"accepted": True}
    [view] = parts_of(turn["message"], "data-view")
    assert view["data"]["title"] == VIEW["title"]


def test_a_call_whose_step_failed_while_its_input_streamed_ends_as_an_input_error_in_the_sdk(sdk, served, make_env):
    from groundchat.models.failures import ModelFailure

    model = ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "checklist"})], input_pieces=3,
                                raise_error=ModelFailure("upstream_unreachable", "the stream broke"))])
    env = make_env(model)
    read = read_with_sdk(sdk, served.url(env.app), token(env, "alice"), new_chat_id(), ["Which context is best?"])

    [turn] = read["turns"]
    assert turn["status"] == "error"
    chunks = turn["chunks"]
    start = chunks.index("tool-input-start")
    assert chunks[start:start + 5] == ["tool-input-start", *["tool-input-delta"] * 3, "tool-input-error"]
    assert "tool-input-available" not in chunks  # the call was never made
    [call] = parts_of(turn["message"], "tool-compare_contexts")
    # Not left "input-streaming": the SDK's chat shows the call ended, with what had arrived of it.
    assert call["state"] == "output-error" and call["errorText"].startswith("This call was never made")
    # What had arrived of its input: `input` in ai 7, `rawInput` in ai 5.
    assert call.get("input", call.get("rawInput")) == '{"context": "checklist"}'
