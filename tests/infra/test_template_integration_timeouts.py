"""Every Api event's integration timeout within what API Gateway accepts for a REST API: a
streaming (RESPONSE_STREAM) integration up to 15 minutes (900000 ms), a buffered one from 50 ms to
29000 ms without a quota increase (its default is 29000). The streaming route's function must not
stop before API Gateway would: its Timeout covers the integration's."""
from __future__ import annotations

from tests.infra.conftest import functions_of

STREAM_MAX_MS = 900_000
BUFFERED_DEFAULT_MAX_MS = 29_000
MIN_MS = 50


def _api_events(resources):
    for logical, function in functions_of(resources).items():
        for name, event in function["Properties"].get("Events", {}).items():
            if event["Type"] == "Api":
                yield logical, name, event["Properties"]


def test_each_integration_timeout_is_one_api_gateway_accepts(resources):
    checked = 0
    for logical, name, props in _api_events(resources):
        timeout = props.get("TimeoutInMillis")
        if props.get("ResponseTransferMode") == "RESPONSE_STREAM":
            assert timeout is not None and MIN_MS <= timeout <= STREAM_MAX_MS, (logical, name, timeout)
            checked += 1
        elif timeout is not None:
            assert MIN_MS <= timeout <= BUFFERED_DEFAULT_MAX_MS, (logical, name, timeout)
    assert checked == 3  # /api/chat, /api/ai-sdk/chat and its resume route are the streaming routes


def test_the_streaming_function_outlasts_its_integration(resources):
    for logical, name, props in _api_events(resources):
        if props.get("ResponseTransferMode") == "RESPONSE_STREAM":
            function_timeout_s = resources[logical]["Properties"]["Timeout"]
            assert function_timeout_s * 1000 >= props["TimeoutInMillis"] == STREAM_MAX_MS, (logical, name)


def test_the_api_is_regional_so_a_stream_may_idle_for_minutes(resources):
    # A streamed response is cut after 5 minutes without a byte on a regional endpoint, after 30
    # seconds on an edge-optimized one: an answer's frames come as the model writes, and a model
    # call or tool silent for 30 seconds is plausible, 5 minutes is not.
    [api] = [r for r in resources.values() if r["Type"] == "AWS::Serverless::Api"]
    assert api["Properties"]["EndpointConfiguration"]["Type"] == "REGIONAL"
