"""Shared conversations on moto, a record of every DynamoDB operation, and a model that counts."""
from __future__ import annotations


import pytest

from groundchat.models.messages import Message, ToolCall
from tests.lambda_support import LambdaContext

OWNER = "alice"




def rest_event(path: str, resource: str, path_parameters: dict | None = None, query: dict | None = None) -> dict:
    """An API Gateway REST API (v1) proxy event, as API Gateway sends it for a GET."""
    headers = {"Host": "abc123.execute-api.eu-west-1.amazonaws.com", "Accept": "*/*", "X-Forwarded-Proto": "https"}
    return {
        "resource": resource,
        "path": path,
        "httpMethod": "GET",
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": path_parameters,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": "GET",
            "path": f"/prod{path}",
            "stage": "prod",
            "requestId": "req-1",
            "accountId": "123456789012",
            "apiId": "abc123",
            "identity": {"sourceIp": "203.0.113.7", "userAgent": "pytest"},
        },
        "body": None,
        "isBase64Encoded": False,
    }


class CountingModel:
    """Stands in for any model; a share route that reached it would be a bug."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        raise AssertionError("the share function called a model")


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture(name="rest_event")
def rest_event_fixture():
    return rest_event


@pytest.fixture(name="make_conversation")
def make_conversation_fixture():
    return make_conversation


@pytest.fixture
def counting_model() -> CountingModel:
    return CountingModel()


@pytest.fixture
def operations(dynamo):
    """Every DynamoDB operation name the client sends, recorded from the moment a test starts."""
    seen: list[str] = []
    dynamo.client.meta.events.register("before-call.dynamodb", lambda model, **_: seen.append(model.name))
    dynamo.resource.meta.client.meta.events.register("before-call.dynamodb", lambda model, **_: seen.append(model.name))
    return seen


async def make_conversation(store, conversation_id: str, title: str, *, shared: bool) -> None:
    messages = [
        Message(role="user", content=title),
        Message(role="assistant", content="", tool_calls=[ToolCall(id="t1", name="compare_contexts", args={"model": "m1"})]),
        Message(role="tool", content='{"rows": [{"context": "full", "mean_violations": 2.5}]}', tool_call_id="t1", name="compare_contexts"),
        Message(role="assistant", content="Full context has 2.5 violations on average [3f9a1b2c]."),
    ]
    annotations = {"citations": {"sources": [{"n": 1, "ref": "3f9a1b2c", "title": "1.4.3 Contrast"}], "unverified": []}}
    await store.commit_exchange(conversation_id=conversation_id, owner=OWNER, run_id="run-" + conversation_id[:6],
                                existing=None, messages=messages, annotations=annotations, title=title)
    if shared:
        assert await store.set_shared(conversation_id, OWNER, True) is not None
