"""The share function as Lambda runs it: REST proxy events through Mangum, on moto."""
from __future__ import annotations

import json

import pytest

SHARED = "f" * 32
PRIVATE = "9" * 32
UNKNOWN = "0" * 32


@pytest.fixture
async def handler(dynamo, settings, operations, make_conversation, monkeypatch):
    from groundchat.services import Services
    import groundchat.models.adapters as factory
    from share_function import handler as module

    seed = Services(settings=settings, dynamo=dynamo)
    await make_conversation(seed.conversations, SHARED, "What does 1.4.3 require?", shared=True)
    await make_conversation(seed.conversations, PRIVATE, "Not for sharing", shared=False)
    operations.clear()

    builds: list[str] = []

    def no_model(*args, **kwargs):
        builds.append("build_model")
        raise AssertionError("the share function built a model")

    monkeypatch.setattr(factory, "build_model", no_model)
    module.reset()
    # The handler's own services must reach moto through the same patched boto3: record their calls too.
    import boto3

    real_client = boto3.client

    def recording_client(service, *args, **kwargs):
        client = real_client(service, *args, **kwargs)
        if service == "dynamodb":
            client.meta.events.register("before-call.dynamodb", lambda model, **_: operations.append(model.name))
        if service in ("bedrock-runtime", "bedrock"):
            builds.append(service)
        return client

    monkeypatch.setattr(boto3, "client", recording_client)
    real_resource = boto3.resource

    def recording_resource(service, *args, **kwargs):
        resource = real_resource(service, *args, **kwargs)
        if service == "dynamodb":
            resource.meta.client.meta.events.register("before-call.dynamodb", lambda model, **_: operations.append(model.name))
        return resource

    monkeypatch.setattr(boto3, "resource", recording_resource)
    module.handler.builds = builds  # type: ignore[attr-defined]
    module.handler.operations = operations  # type: ignore[attr-defined]
    yield module.handler
    module.reset()


def test_shared_conversation_answers_through_a_rest_proxy_event(handler, rest_event, lambda_context):
    event = rest_event(f"/api/shared/{SHARED}", "/api/shared/{id}", {"id": SHARED})
    response = handler(event, lambda_context)
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"] == "application/json"
    assert response["isBase64Encoded"] is False
    body = json.loads(response["body"])
    assert body["conversation"]["conversation_id"] == SHARED
    assert body["messages"][0] == {**body["messages"][0], "role": "user", "content": "What does 1.4.3 require?"}
    assert body["messages"][-1]["content"].startswith("Full context has 2.5 violations")


def test_page_through_a_rest_proxy_event(handler, rest_event, lambda_context):
    response = handler(rest_event(f"/chat/shared/{SHARED}", "/chat/shared/{id}", {"id": SHARED}), lambda_context)
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"].startswith("text/html")
    assert "What does 1.4.3 require?" in response["body"]
    js = handler(rest_event("/static/transcript.js", "/static/transcript.js"), lambda_context)
    assert js["statusCode"] == 200 and "GroundchatTranscript" in js["body"]


def test_unshared_is_the_same_404_as_unknown(handler, rest_event, lambda_context):
    private = handler(rest_event(f"/api/shared/{PRIVATE}", "/api/shared/{id}", {"id": PRIVATE}), lambda_context)
    unknown = handler(rest_event(f"/api/shared/{UNKNOWN}", "/api/shared/{id}", {"id": UNKNOWN}), lambda_context)
    assert private["statusCode"] == unknown["statusCode"] == 404
    assert private["body"] == unknown["body"]
    assert json.loads(private["body"]) == {"error": {"code": "not-found", "message": "No such shared conversation."}}


def test_list_through_a_rest_proxy_event(handler, rest_event, lambda_context):
    response = handler(rest_event("/api/shared", "/api/shared", query={"limit": "5"}), lambda_context)
    assert response["statusCode"] == 200
    assert [c["conversation_id"] for c in json.loads(response["body"])["conversations"]] == [SHARED]


def test_zero_model_calls_and_reads_only(handler, rest_event, lambda_context):
    for path, resource, params in (
        (f"/api/shared/{SHARED}", "/api/shared/{id}", {"id": SHARED}),
        (f"/api/shared/{PRIVATE}", "/api/shared/{id}", {"id": PRIVATE}),
        (f"/chat/shared/{SHARED}", "/chat/shared/{id}", {"id": SHARED}),
        ("/api/shared", "/api/shared", None),
    ):
        handler(rest_event(path, resource, params), lambda_context)
    assert handler.builds == []
    assert handler.operations and set(handler.operations) <= {"GetItem", "Query"}


def test_emits_a_metric_line_per_read(handler, rest_event, lambda_context, monkeypatch, capsys):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    handler(rest_event(f"/api/shared/{UNKNOWN}", "/api/shared/{id}", {"id": UNKNOWN}), lambda_context)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]
    reads = [line for line in lines if "SharedReads" in line]
    assert len(reads) == 1
    assert reads[0]["outcome"] == "404"
    assert reads[0]["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "groundchat"


def test_the_page_through_a_rest_proxy_event_carries_the_security_headers(handler, rest_event, lambda_context):
    answer = handler(rest_event(f"/chat/shared/{'a' * 32}", "/chat/shared/{id}", {"id": "a" * 32}), lambda_context)
    headers = {k.lower(): v for k, v in {**(answer.get("headers") or {}),
                                         **{k: v[-1] for k, v in (answer.get("multiValueHeaders") or {}).items()}}.items()}
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
