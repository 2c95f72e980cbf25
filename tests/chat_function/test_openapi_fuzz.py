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
    assert sorted(doc["responses"]) == ["200", "400", "401", "403", "404", "409", "413", "429", "500", "502", "503"]
    assert list(doc["responses"]["200"]["content"]) == ["text/event-stream", "application/json"]
    assert doc["responses"]["429"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}


@pytest.fixture
def combined(make_env):
    """The chat app with the share routes beside it, as the local stack and API Gateway serve them."""
    from share_function.app import add_share_routes

    env = make_env(ScriptedModel([Step(text="An answer.", input_tokens=10, output_tokens=5)], repeat_last=True))
    add_share_routes(env.app, env.services)
    return env


def test_the_share_routes_answer_as_their_document_says(combined):
    schema = schemathesis.openapi.from_asgi("/openapi.json", combined.app)
    operations = [r.ok() for r in schema.get_all_operations() if "/shared" in r.ok().path]
    assert len(operations) == 4
    failures = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                  derandomize=True)
        def fuzz(case):
            case.call_and_validate()

        try:
            fuzz()
        except Exception as exc:
            failures.append(f"{operation.label}: {str(exc)[:600]}")
    assert failures == []
    page = combined.app.openapi()["paths"]["/chat/shared/{conversation_id}"]["get"]["responses"]
    assert list(page["200"]["content"]) == ["text/html"] and list(page["404"]["content"]) == ["text/html"]


async def test_what_the_framework_answers_itself_is_typed_and_documented(combined):
    async with combined.client() as client:
        out_of_range = await client.get("/api/shared?limit=0")
        unknown = await client.get("/api/nothing-here")
        wrong_method = await client.put("/api/conversations/c-1", headers=combined.token("alice"))
    assert out_of_range.status_code == 400
    assert out_of_range.json() == {"error": {"code": "bad-request", "message": "limit: Input should be greater than or equal to 1."}}
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not-found"
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "DELETE, GET"
    assert wrong_method.json()["error"]["code"] == "method-not-allowed"
    doc = combined.app.openapi()
    statuses = {status for path in doc["paths"].values() for op in path.values() for status in op["responses"]}
    assert "422" not in statuses and "HTTPValidationError" not in doc["components"]["schemas"]
