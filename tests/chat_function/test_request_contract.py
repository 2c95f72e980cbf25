"""`ChatBody` is the only statement of `POST /api/chat`'s body: the OpenAPI document's request schema
is its JSON schema with the deployment's bounds, the body is validated by the same model, and a rule
changed in `ChatBody` changes the document."""
from __future__ import annotations

from pydantic import Field

from chat_function.openapi import chat_request
from groundchat.chat import question_body
from groundchat.chat.question_body import BodyLimits, ChatBody, parse_body
from groundchat.exchange.refusal import Refusal


def request_schema(max_chars: int = 2000, max_top_k: int = 8) -> dict:
    return chat_request(max_chars, max_top_k)["requestBody"]["content"]["application/json"]["schema"]


def test_the_document_states_the_bounds_the_body_is_checked_with():
    schema = request_schema(300, 5)
    assert schema["properties"]["message"]["maxLength"] == 300
    assert schema["properties"]["top_k"]["anyOf"][0]["maximum"] == 5
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(ChatBody.model_fields)
    refused = parse_body({"message": "x" * 301}, BodyLimits(300, 5))
    assert isinstance(refused, Refusal) and refused.message == "message is over 300 characters"
    refused = parse_body({"message": "hi", "top_k": 6}, BodyLimits(300, 5))
    assert isinstance(refused, Refusal) and refused.message == "top_k: at most 5 excerpts per search"
    assert parse_body({"message": "hi", "top_k": 5}, BodyLimits(300, 5)).top_k == 5


def test_a_rule_changed_in_the_body_model_changes_the_document(monkeypatch):
    before = request_schema()
    assert before["properties"]["sources"]["anyOf"][0].get("maxItems") == 3

    class OneSourceAtMost(ChatBody):
        sources: list[question_body.Source] | None = Field(default=None, min_length=1, max_length=1)

    monkeypatch.setattr(question_body, "ChatBody", OneSourceAtMost)
    after = request_schema()
    assert after["properties"]["sources"]["anyOf"][0]["maxItems"] == 1
    refused = parse_body({"message": "hi", "sources": ["eaa", "docs"]}, BodyLimits(2000, 8))
    assert isinstance(refused, Refusal) and refused.message.startswith("sources:")


def test_the_both_legs_off_rule_is_in_the_document_and_refused():
    assert request_schema()["not"]["required"] == ["include_vector", "include_sparse"]
    refused = parse_body({"message": "hi", "include_vector": False, "include_sparse": False}, BodyLimits(2000, 8))
    assert isinstance(refused, Refusal) and refused.message == question_body.BOTH_LEGS_OFF
