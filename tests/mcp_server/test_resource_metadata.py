"""The protected-resource metadata and the 401's challenge: the OIDC issuer as the authorization
server in AWS, none with dev tokens, and the API stage kept in every address."""
from __future__ import annotations

import json

from starlette.requests import Request

from chat_function.mcp_route import public_base
from groundchat.config import Settings
from groundchat.mcp.resource_metadata import challenge, metadata_url, protected_resource

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc123"


def _request(path: str, context: dict | None = None) -> Request:
    headers = [(b"host", b"abc.execute-api.eu-west-1.amazonaws.com"), (b"x-forwarded-proto", b"https")]
    if context is not None:
        headers.append((b"x-amzn-request-context", json.dumps(context).encode()))
    return Request({"type": "http", "method": "POST", "scheme": "https", "path": path, "headers": headers,
                    "query_string": b"", "server": ("abc.execute-api.eu-west-1.amazonaws.com", 443)})


def test_in_aws_the_oidc_issuer_is_the_authorization_server():
    document = protected_resource(Settings(auth_mode="oidc", oidc_issuer=ISSUER), "https://api.example/prod")
    assert document == {"resource": "https://api.example/prod/mcp", "authorization_servers": [ISSUER],
                        "bearer_methods_supported": ["header"], "resource_name": Settings().bot_name}


def test_with_dev_tokens_no_authorization_server_is_named():
    assert "authorization_servers" not in protected_resource(Settings(auth_mode="dev", oidc_issuer=ISSUER), "http://x")


def test_behind_api_gateway_the_stage_is_in_the_resource_and_the_challenge():
    base = public_base(_request("/mcp", {"stage": "prod", "path": "/prod/mcp"}))
    assert base == "https://abc.execute-api.eu-west-1.amazonaws.com/prod"
    assert challenge(base) == ('Bearer resource_metadata="https://abc.execute-api.eu-west-1.amazonaws.com'
                               '/prod/.well-known/oauth-protected-resource/mcp"')
    # The metadata route itself finds the same base from its own path.
    assert public_base(_request("/.well-known/oauth-protected-resource/mcp",
                                {"path": "/prod/.well-known/oauth-protected-resource/mcp"})) == base


def test_without_a_request_context_the_base_is_the_host_alone():
    assert public_base(_request("/mcp")) == "https://abc.execute-api.eu-west-1.amazonaws.com"
    assert public_base(_request("/mcp", {"path": "/elsewhere"})) == "https://abc.execute-api.eu-west-1.amazonaws.com"
    assert metadata_url("http://127.0.0.1:9/") == "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
