"""The OpenAPI document is complete enough to fuzz: every route, generated from the document and
sent with a valid token, answers no 5xx and nothing the document does not declare."""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from groundchat_testkit.scripted import ScriptedModel, Step

# Bounded: a handful of examples per operation keeps the whole run well under a minute.
EXAMPLES_PER_OPERATION = 12


@pytest.fixture
def fuzzed(make_env):
    env = make_env(ScriptedModel([Step(text="An answer.", input_tokens=10, output_tokens=5)], repeat_last=True))
    return env


def test_every_route_answers_as_its_document_says(fuzzed):
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzzed.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15  # every route is in the document
    failures = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                  derandomize=True)  # the same examples every run: the share that answers is fixed, not luck
        def fuzz(case):
            case.call_and_validate(headers=fuzzed.token("alice"))

        try:
            fuzz()
        except Exception as exc:  # collected, so one run reports every operation that broke
            failures.append(f"{operation.label}: {str(exc)[:600]}")
    assert failures == []
    assert fuzzed.model.calls >= EXAMPLES_PER_OPERATION // 2  # the chat route really answered, not only refused


def test_the_chat_route_declares_its_body_and_every_refusal(fuzzed):
    doc = fuzzed.app.openapi()["paths"]["/api/chat"]["post"]
    body = doc["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["message"] and body["additionalProperties"] is False
    assert body["properties"]["message"]["maxLength"] == 2000
    assert sorted(doc["responses"]) == ["200", "400", "401", "403", "404", "409", "413", "429", "500", "503"]
    assert list(doc["responses"]["200"]["content"]) == ["text/event-stream"]
    assert doc["responses"]["429"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
