"""Each translation function on transcripts the loop produced, checked by our rules and the provider's."""
from __future__ import annotations

import json

import pytest
from botocore.exceptions import ParamValidationError

from groundchat.models import bedrock, openai_compat
from groundchat.models.bedrock import EMPTY_TURN_TEXT, OMITTED_HISTORY_TEXT, bedrock_tool_use_id, to_converse_request
from groundchat.models.openai_compat import to_openai_messages
from groundchat_testkit.scripted import assert_provider_transcript
from groundchat_testkit.providers import (
    BedrockRuleBroken,
    OpenAIRuleBroken,
    assert_bedrock_messages,
    assert_bedrock_request,
    assert_openai_messages,
)
from groundchat.models.messages import NO_RESULT, Message, ModelRequest, ToolCall, ToolSpec

import tests.models.provider_recordings as rec

CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0"
CACHE_POINT = {"cachePoint": {"type": "default"}}  # after the latest turn, for models that cache messages
NOVA = "amazon.nova-lite-v1:0"


@pytest.fixture
async def transcripts():
    return await rec.loop_transcripts()


async def test_every_loop_transcript_passes_every_providers_rules(transcripts):
    assert set(transcripts) == {"several_calls", "tool_error", "no_result", "refused_tool", "two_rounds", "after_max_steps"}
    for name, request in transcripts.items():
        assert_provider_transcript(request.messages)
        for model_id in (CLAUDE, NOVA):
            body = to_converse_request(request, model_id)
            assert_bedrock_request(body)
        assert_openai_messages(to_openai_messages(request)["messages"])


async def test_several_calls_in_one_turn_answered_in_one_user_turn(transcripts):
    body = to_converse_request(transcripts["several_calls"], CLAUDE)
    user_turn = body["messages"][2]
    assert user_turn["role"] == "user"
    assert user_turn["content"][-1] == CACHE_POINT
    assert [b["toolResult"]["toolUseId"] for b in user_turn["content"][:-1]] == ["call_0_0", "call_0_1"]
    assert json.loads(user_turn["content"][1]["toolResult"]["content"][0]["text"])["q"] == "b"
    # The assistant turn had no text: only the two toolUse blocks, never a blank text block.
    assert body["messages"][1]["content"] == [
        {"toolUse": {"toolUseId": "call_0_0", "name": "lookup", "input": {"q": "a"}}},
        {"toolUse": {"toolUseId": "call_0_1", "name": "lookup", "input": {"q": "b"}}},
    ]

    messages = to_openai_messages(transcripts["several_calls"])["messages"]
    assert messages[2]["content"] == ""  # not null beside tool calls
    assert [m["tool_call_id"] for m in messages[3:5]] == ["call_0_0", "call_0_1"]


async def test_tool_error_status_only_where_the_model_accepts_it(transcripts):
    request = transcripts["tool_error"]
    claude = to_converse_request(request, CLAUDE)["messages"][2]["content"][0]["toolResult"]
    nova = to_converse_request(request, NOVA)["messages"][2]["content"][0]["toolResult"]
    assert claude["status"] == "error"
    assert "status" not in nova
    assert claude["content"] == nova["content"] == [{"text": "error: tool-failed: boom could not run this time (it failed inside); answer without it or try again later"}]
    tool_message = to_openai_messages(request)["messages"][3]
    assert tool_message == {"role": "tool", "tool_call_id": "call_0_0", "content": "error: tool-failed: boom could not run this time (it failed inside); answer without it or try again later"}


async def test_no_result_is_sent_as_words_never_empty(transcripts):
    request = transcripts["no_result"]
    result = to_converse_request(request, CLAUDE)["messages"][2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": NO_RESULT}]
    assert to_openai_messages(request)["messages"][3]["content"] == NO_RESULT


async def test_question_after_max_steps_merges_into_the_results_turn(transcripts):
    body = to_converse_request(transcripts["after_max_steps"], CLAUDE)
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:]))
    last = body["messages"][-1]["content"]
    # The unanswered-by-text tool results come first, then the new question, in one user turn.
    assert "toolResult" in last[0] and last[-2:] == [{"text": "And now?"}, CACHE_POINT]


def test_even_a_tool_result_with_empty_content_gets_words():
    request = ModelRequest(system="s", tools=[ToolSpec(name="t", description="d", input_schema={"type": "object"})], messages=[
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="t")]),
        Message(role="tool", tool_call_id="c1", name="t", content=""),
        Message(role="assistant", content=""),  # an empty turn is dropped, not sent blank
        Message(role="user", content="   "),
    ])
    body = to_converse_request(request, CLAUDE)
    assert_bedrock_request(body)
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": NO_RESULT}], "status": "success"}},
        {"text": EMPTY_TURN_TEXT},
        CACHE_POINT,
    ]
    assert_openai_messages(to_openai_messages(request)["messages"])


def test_history_starting_with_the_assistant_gets_a_user_turn_first():
    request = ModelRequest(system="", tools=[], messages=[Message(role="assistant", content="Earlier answer"), Message(role="user", content="q")])
    body = to_converse_request(request, CLAUDE)
    assert body["messages"][0] == {"role": "user", "content": [{"text": OMITTED_HISTORY_TEXT}]}
    assert "system" not in body and "toolConfig" not in body
    assert_bedrock_request(body)


async def test_without_tools_offered_earlier_calls_become_words(transcripts):
    request = transcripts["two_rounds"].model_copy(update={"tools": []})
    body = to_converse_request(request, CLAUDE)
    assert_bedrock_request(body)  # Converse refuses toolUse blocks without a toolConfig
    flat = json.dumps(body["messages"])
    assert "toolUse" not in flat and "toolResult" not in flat
    assert "(called lookup with {\\\"q\\\": \\\"1\\\"})" in flat


def test_foreign_tool_ids_are_mapped_the_same_way_on_both_sides():
    odd = "call/with spaces+slashes"
    request = ModelRequest(system="s", tools=[ToolSpec(name="t", description="d", input_schema={"type": "object"})], messages=[
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=[ToolCall(id=odd, name="t")]),
        Message(role="tool", tool_call_id=odd, name="t", content="r"),
    ])
    body = to_converse_request(request, CLAUDE)
    assert_bedrock_request(body)
    mapped = bedrock_tool_use_id(odd)
    assert body["messages"][1]["content"][0]["toolUse"]["toolUseId"] == mapped
    assert body["messages"][2]["content"][0]["toolResult"]["toolUseId"] == mapped
    assert bedrock_tool_use_id("tooluse_ok-1.2:3") == "tooluse_ok-1.2:3"


# Mutation checks: break the translation the way a careless edit would, and the checks turn red.


async def test_dropping_tool_use_from_the_assistant_turn_is_caught(transcripts, monkeypatch):
    monkeypatch.setattr(bedrock, "_assistant_blocks", lambda message, with_tools: [{"text": message.content or "x"}])
    body = to_converse_request(transcripts["several_calls"], CLAUDE)
    with pytest.raises(BedrockRuleBroken, match="toolResults"):
        assert_bedrock_messages(body["messages"])


async def test_dropping_tool_calls_from_the_assistant_turn_is_caught(transcripts, monkeypatch):
    monkeypatch.setattr(openai_compat, "_assistant_message", lambda message: {"role": "assistant", "content": message.content or "Checking."})
    messages = to_openai_messages(transcripts["several_calls"])["messages"]
    with pytest.raises(OpenAIRuleBroken, match="answers no call"):
        assert_openai_messages(messages)


async def test_null_content_beside_tool_calls_is_caught(transcripts, monkeypatch):
    original = openai_compat._assistant_message

    def null_content(message):
        out = original(message)
        if out and out.get("tool_calls"):
            out["content"] = None
        return out

    monkeypatch.setattr(openai_compat, "_assistant_message", null_content)
    with pytest.raises(OpenAIRuleBroken, match="not a string"):
        assert_openai_messages(to_openai_messages(transcripts["several_calls"])["messages"])


async def test_splitting_results_over_two_user_turns_is_caught(transcripts):
    body = to_converse_request(transcripts["several_calls"], CLAUDE)
    messages = body["messages"]
    results = messages[2]["content"]
    split = [*messages[:2], {"role": "user", "content": results[:1]}, {"role": "assistant", "content": [{"text": "hm"}]}, {"role": "user", "content": results[1:]}]
    with pytest.raises(BedrockRuleBroken):
        assert_bedrock_messages(split)


def test_bedrock_checker_rules():
    ok_use = {"toolUse": {"toolUseId": "a", "name": "t", "input": {}}}
    ok_result = {"toolResult": {"toolUseId": "a", "content": [{"text": "r"}]}}
    cases = {
        "must start with a user": [{"role": "assistant", "content": [{"text": "x"}]}],
        "two user turns": [{"role": "user", "content": [{"text": "x"}]}, {"role": "user", "content": [{"text": "y"}]}],
        "empty content": [{"role": "user", "content": []}],
        "blank text": [{"role": "user", "content": [{"text": " "}]}],
        "unanswered": [{"role": "user", "content": [{"text": "q"}]}, {"role": "assistant", "content": [ok_use]}],
        "two toolResults": [
            {"role": "user", "content": [{"text": "q"}]}, {"role": "assistant", "content": [ok_use]},
            {"role": "user", "content": [ok_result, ok_result]},
        ],
        "toolResult with empty content": [
            {"role": "user", "content": [{"text": "q"}]}, {"role": "assistant", "content": [ok_use]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": []}}]},
        ],
        "must answer exactly": [{"role": "user", "content": [ok_result]}],
        "follows content": [{"role": "user", "content": [{"cachePoint": {"type": "default"}}]}],
        "a cachePoint is": [{"role": "user", "content": [{"text": "q"}, {"cachePoint": {"type": "forever"}}]}],
    }
    for expected, messages in cases.items():
        with pytest.raises(BedrockRuleBroken, match=expected):
            assert_bedrock_messages(messages)


def test_botocore_validation_is_part_of_the_request_check():
    body = {"modelId": CLAUDE, "messages": [{"role": "user", "content": [{"text": "q", "toolUse": {}}]}]}
    with pytest.raises(ParamValidationError):
        assert_bedrock_request(body)


def test_openai_checker_rules():
    call = {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    cases = {
        "answers no call": [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "content": "r"}],
        "unanswered": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "user", "content": "again"}],
        "second answer": [
            {"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": "r"}, {"role": "tool", "tool_call_id": "c", "content": "r"},
        ],
        "arguments are not JSON": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [{**call, "function": {"name": "t", "arguments": "{"}}]}],
        "empty content": [
            {"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": ""},
        ],
    }
    for expected, messages in cases.items():
        with pytest.raises(OpenAIRuleBroken, match=expected):
            assert_openai_messages(messages)
