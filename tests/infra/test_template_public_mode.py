"""Public mode in the template: its parameters, secrets only by dynamic reference, the deploy-time
rule that refuses a public stack with a hole in it, and the rate-limit table's least privilege."""
from __future__ import annotations

from decimal import Decimal

from groundchat.config import Settings
from tests.infra.conftest import TEMPLATE, function_env, statements


def test_the_mode_and_the_three_guards_are_parameters(template):
    parameters = template["Parameters"]
    assert parameters["Mode"]["Default"] == "private" == Settings().mode
    assert parameters["Mode"]["AllowedValues"] == ["private", "public"]
    assert parameters["PublicBudgetUsd"]["Default"] == ""  # no ceiling unless one is chosen
    assert int(parameters["VisitorRateLimit"]["Default"]) > 0
    assert {"TurnstileSiteKey", "TurnstileSecretName"} <= set(parameters)
    # No parameter carries a secret's value: the Turnstile secret is named, and read by CloudFormation.
    assert not any("NoEcho" in p for p in parameters.values())
    chat = function_env(template, "ChatFunction")
    assert chat["GROUNDCHAT_MODE"] == {"Ref": "Mode"}
    assert chat["GROUNDCHAT_PUBLIC_BUDGET_USD"] == {"Ref": "PublicBudgetUsd"}
    assert chat["GROUNDCHAT_VISITOR_RATE_LIMIT"] == {"Ref": "VisitorRateLimit"}
    assert chat["GROUNDCHAT_TURNSTILE_SITE_KEY"] == {"Ref": "TurnstileSiteKey"}
    assert chat["GROUNDCHAT_VISITOR_ADDRESS_FROM"] == "api-gateway" != Settings().visitor_address_from


def test_the_secrets_are_dynamic_references_used_only_in_public_mode(template, resources):
    chat = function_env(template, "ChatFunction")
    assert chat["GROUNDCHAT_TURNSTILE_SECRET"] == {
        "Fn::If": ["IsPublic", {"Fn::Sub": "{{resolve:secretsmanager:${TurnstileSecretName}}}"}, ""]}
    assert chat["GROUNDCHAT_VISITOR_SECRET"] == {
        "Fn::If": ["IsPublic", {"Fn::Sub": "{{resolve:secretsmanager:${VisitorSecret}}}"}, ""]}
    secret = resources["VisitorSecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret" and secret["Condition"] == "IsPublic"
    assert secret["Properties"]["GenerateSecretString"]["PasswordLength"] >= 32  # what the app requires
    assert template["Conditions"]["IsPublic"] == {"Fn::Equals": [{"Ref": "Mode"}, "public"]}


def test_a_public_stack_without_a_guard_is_refused_at_deploy(template):
    rule = template["Rules"]["PublicModeHasEveryGuard"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "Mode"}, "public"]}
    checked = str(rule["Assertions"])
    for parameter in ("VisitorRateLimit", "TurnstileSiteKey", "TurnstileSecretName", "PublicBudgetUsd"):
        assert f"'Ref': '{parameter}'" in checked, parameter
    descriptions = " ".join(a["AssertDescription"] for a in rule["Assertions"])
    assert "rate limit" in descriptions and "bot wall" in descriptions and "spending ceiling" in descriptions


def test_the_rate_limit_table_is_read_and_updated_only(resources):
    granted = [s for s in statements(resources, "ChatFunction") if s.get("Sid") == "VisitorRateLimits"]
    assert granted == [{"Sid": "VisitorRateLimits", "Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:UpdateItem"],
                        "Resource": {"Fn::GetAtt": ["RateLimitsTable", "Arn"]}}]
    table = resources["RateLimitsTable"]["Properties"]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}


def test_the_widget_script_is_routed_and_the_budget_pattern_takes_the_settings_decimals(resources, template):
    events = resources["ChatFunction"]["Properties"]["Events"]
    assert events["PublicScript"]["Properties"] == {"RestApiId": {"Ref": "Api"}, "Path": "/static/public.js", "Method": "GET"}
    import re

    pattern = template["Parameters"]["PublicBudgetUsd"]["AllowedPattern"]
    assert re.fullmatch(pattern, "0.25") and re.fullmatch(pattern, "") and not re.fullmatch(pattern, "-1")
    assert Settings(public_budget_usd="0.25").public_budget_usd == Decimal("0.25")
    assert "GROUNDCHAT_TURNSTILE_SECRET: !If [IsPublic" in TEMPLATE.read_text(encoding="utf-8")
