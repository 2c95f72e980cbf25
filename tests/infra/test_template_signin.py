"""The template's sign-in: the Cognito hosted UI and app client for the authorization-code flow
with PKCE, the secret the chat function reads its client settings from, and no dependency cycle
between the app client, the API and the chat function."""
from __future__ import annotations

import json
import re
from unittest.mock import MagicMock

from groundchat.auth.oidc_config import SECRET_KEYS
from groundchat.config import Settings
from tests.infra.conftest import function_env, statements
from tests.infra.test_template_functions import _app_routes, _routes

BASE = {"Fn::If": ["HasPublicUrl", {"Ref": "PublicUrl"},
                   {"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}.amazonaws.com/${Stage}"}]}


def test_the_app_client_uses_the_code_flow_with_the_apis_addresses(resources):
    client = resources["UserPoolClient"]["Properties"]
    assert client["AllowedOAuthFlowsUserPoolClient"] is True
    assert client["AllowedOAuthFlows"] == ["code"]  # no implicit flow: tokens never ride in a URL
    assert sorted(client["AllowedOAuthScopes"]) == ["email", "openid", "profile"]
    assert client["GenerateSecret"] is False  # a public client: PKCE proves the code is ours
    assert client["CallbackURLs"] == [{"Fn::Sub": ["${Base}/auth/callback", {"Base": BASE}]}]
    assert client["LogoutURLs"] == [{"Fn::Sub": ["${Base}/chat", {"Base": BASE}]}]
    assert client["SupportedIdentityProviders"] == {"Fn::Split": [",", {"Ref": "IdentityProviders"}]}
    assert "ALLOW_REFRESH_TOKEN_AUTH" in client["ExplicitAuthFlows"]


def test_the_hosted_ui_has_a_domain(resources, template):
    domain = resources["UserPoolDomain"]
    assert domain["Type"] == "AWS::Cognito::UserPoolDomain"
    assert domain["Properties"]["UserPoolId"] == {"Ref": "UserPool"}
    default = domain["Properties"]["Domain"]["Fn::If"][2]["Fn::Sub"]
    # Cognito refuses prefixes with "aws", "amazon" or "cognito", and upper case.
    assert re.fullmatch(r"[a-z0-9${}:.A-Za-z-]+", default) and not re.search(r"aws(?!::)|amazon|cognito", default)
    assert "SignInDomain" in template["Outputs"]


def test_the_chat_function_reads_its_client_settings_from_the_sign_in_secret(resources, template):
    env = function_env(template, "ChatFunction")
    assert env["GROUNDCHAT_AUTH_MODE"] == "oidc"
    secret = resources["SignInSecret"]["Properties"]
    assert env["GROUNDCHAT_OIDC_SECRET_ID"] == secret["Name"]
    generated = secret["GenerateSecretString"]
    filled = json.loads(re.sub(r"\$\{[^}]+\}", "x", generated["SecretStringTemplate"]["Fn::Sub"][0]))
    assert set(filled) | {generated["GenerateStringKey"]} <= set(SECRET_KEYS)
    assert {"oidc_client_id", "oidc_redirect_url", "session_secret"} <= set(filled) | {generated["GenerateStringKey"]}
    assert generated["PasswordLength"] >= 32  # the session secret's minimum
    assert set(SECRET_KEYS) <= set(Settings.model_fields)  # a secret's keys are settings' names
    [read] = [s for s in statements(resources, "ChatFunction") if s.get("Sid") == "ReadTheSignInSecret"]
    assert read["Action"] == ["secretsmanager:GetSecretValue"]
    name = secret["Name"]["Fn::Sub"]
    assert read["Resource"]["Fn::Sub"][0].endswith(":secret:" + name[0] + "-??????")
    assert read["Resource"]["Fn::Sub"][1] == name[1]
    # No secret and no app client in the function's environment itself.
    assert "GROUNDCHAT_SESSION_SECRET" not in env and "GROUNDCHAT_OIDC_CLIENT_ID" not in env


def _references(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0] if isinstance(value, list) else value.split(".")[0])
            elif key == "Fn::Sub":
                text = value if isinstance(value, str) else value[0]
                found |= set(re.findall(r"\$\{([A-Za-z0-9]+)(?:\.[A-Za-z]+)?\}", text))
                _references(value if isinstance(value, str) else value[1:], found)
            else:
                _references(value, found)
    elif isinstance(node, list):
        for item in node:
            _references(item, found)
    return found


def test_no_dependency_cycle_after_the_sam_transform():
    """The app client names the API's callback; the API names the chat function: the function must
    not name the app client (it reads it from the secret), or CloudFormation refuses the stack."""
    from tests.infra.test_template_lint import _translate

    resources = _translate({"Stage": "dev"})["Resources"]
    graph = {}
    for name, resource in resources.items():
        depends = resource.get("DependsOn", [])
        named = _references(resource.get("Properties", {}), set()) | set([depends] if isinstance(depends, str) else depends)
        graph[name] = named & set(resources)
    # The API invokes the chat function through its SnapStart alias, which names the function.
    assert "ChatFunctionAliaslive" in graph["Api"] and "ChatFunction" in graph["ChatFunctionAliaslive"]
    assert "Api" in graph["UserPoolClient"]

    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in graph[node]:
            assert nxt not in path, f"dependency cycle: {' -> '.join(path + [nxt])}"
            if nxt not in done:
                visit(nxt, path + [nxt])
        done.add(node)

    for start in graph:
        if start not in done:
            visit(start, [start])


def test_every_sign_in_route_is_routed_to_the_chat_function(resources):
    from chat_function.app import create_app

    services = MagicMock()
    services.settings = Settings(auth_mode="oidc")
    auth_routes = {r for r in _app_routes(create_app(services)) if r[1].startswith("/auth/")}
    assert auth_routes == {("GET", "/auth/sign-in"), ("GET", "/auth/callback"), ("POST", "/auth/refresh"),
                           ("POST", "/auth/sign-out"), ("GET", "/auth/session")}
    assert auth_routes <= _routes(resources, "ChatFunction")
