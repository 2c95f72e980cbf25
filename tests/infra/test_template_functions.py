"""The functions in the template: code that exists, the variables it needs, the routes the apps
have, the streaming route, and policies that name what each function touches."""
from __future__ import annotations

import json

import importlib
import os
import re
import stat
from pathlib import Path

import pytest

import package
from groundchat.config import Settings
from tests.infra.conftest import REPO, TEMPLATE, as_list, function_env, functions_of, statements

FUNCTION_DIRS = {"ChatFunction": "chat", "ShareFunction": "share", "IngestFunction": "ingest", "SweepFunction": "sweep"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return package.build_functions(tmp_path_factory.mktemp("build"))


def test_each_function_is_one_the_packager_builds(resources):
    assert set(functions_of(resources)) == set(FUNCTION_DIRS)
    for logical, name in FUNCTION_DIRS.items():
        assert resources[logical]["Properties"]["CodeUri"] == f"build/functions/{name}"
    assert resources["CoreLayer"]["Properties"]["ContentUri"] == "build/layer"
    assert resources["ModelLayer"]["Properties"]["ContentUri"] == "build/model"


def test_every_handler_exists_in_the_built_artifact(resources, built):
    for logical, name in FUNCTION_DIRS.items():
        handler = resources[logical]["Properties"]["Handler"]
        root = built[name]
        if handler == "run.sh":
            script = root / "run.sh"
            assert script.stat().st_mode & stat.S_IXUSR, "the Web Adapter needs run.sh executable"
            module, attr = re.search(r"(\w+(?:\.\w+)*):(\w+)", script.read_text()).groups()
        else:
            module, attr = handler.rsplit(".", 1)
        path = root / (module.replace(".", "/") + ".py")
        assert path.exists(), f"{logical}: {path} is missing"
        assert re.search(rf"^(def {attr}\b|{attr}\s*=)", path.read_text(), re.M), f"{logical}: no {attr} in {path.name}"
        # The same module imports from the source tree (the layer's groundchat is this one).
        assert hasattr(importlib.import_module(module), attr) or attr == "app"


def test_ingest_carries_the_docs_it_indexes(built, template):
    assert function_env(template, "IngestFunction")["GROUNDCHAT_DOCS_DIR"] == "/var/task/docs"
    assert (built["ingest"] / "docs").is_dir()
    assert sorted(p.name for p in (built["ingest"] / "docs").rglob("*.md")) == sorted(p.name for p in (REPO / "docs").rglob("*.md"))


def test_chat_runs_under_the_web_adapter_streaming(template, resources):
    props = resources["ChatFunction"]["Properties"]
    env = function_env(template, "ChatFunction")
    assert props["Handler"] == "run.sh"
    assert env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert env["AWS_LWA_READINESS_CHECK_PATH"] == "/healthz"
    run_sh = (REPO / "functions/chat/run.sh").read_text()
    assert '"${PORT:-' + env["PORT"] + '}"' in run_sh, "the adapter and uvicorn must agree on the port"
    layers = props["Layers"][0]["Fn::If"]
    assert "LambdaAdapterLayerArm64" in layers[1]["Fn::Sub"] and "LambdaAdapterLayerX86" in layers[2]["Fn::Sub"]
    assert template["Globals"]["Function"]["Runtime"] == "python3.12"
    assert template["Globals"]["Function"]["Layers"] == [{"Ref": "CoreLayer"}, {"Ref": "ModelLayer"}]
    assert props["Timeout"] * 1000 == props["Events"]["ChatStream"]["Properties"]["TimeoutInMillis"]


def test_the_streaming_route(resources):
    stream = resources["ChatFunction"]["Properties"]["Events"]["ChatStream"]
    assert stream == {"Type": "Api", "Properties": {
        "RestApiId": {"Ref": "Api"}, "Path": "/api/chat", "Method": "POST",
        "ResponseTransferMode": "RESPONSE_STREAM", "TimeoutInMillis": 900000}}
    assert resources["ChatFunction"]["Properties"]["Events"]["AiSdkChatStream"]["Properties"] == {
        **stream["Properties"], "Path": "/api/ai-sdk/chat"}  # the AI SDK's stream, streamed the same way
    assert resources["ChatFunction"]["Properties"]["Events"]["AiSdkChatResume"]["Properties"] == {
        **stream["Properties"], "Path": "/api/ai-sdk/chat/{id}/stream", "Method": "GET"}  # useChat's resume, streamed too
    streams = ("ChatStream", "AiSdkChatStream", "AiSdkChatResume")
    others = [e for f in FUNCTIONS_WITH_EVENTS for name, e in resources[f]["Properties"]["Events"].items() if name not in streams]
    assert all("ResponseTransferMode" not in e["Properties"] for e in others)


FUNCTIONS_WITH_EVENTS = ("ChatFunction", "ShareFunction", "IngestFunction", "SweepFunction")


from chat_function.snapstart import AFTER_RESTORE_PATH  # noqa: E402


def _routes(resources, logical: str) -> set[tuple[str, str]]:
    out = set()
    for event in resources[logical]["Properties"]["Events"].values():
        if event["Type"] == "Api":
            path = re.sub(r"\{[^}+]+\}", "{}", event["Properties"]["Path"])
            out.add((event["Properties"]["Method"].upper(), path))
    return out


def _app_routes(app) -> set[tuple[str, str]]:
    out = set()
    for route in app.router.routes:
        # The Web Adapter's own SnapStart call, on the loopback: never routed from API Gateway.
        if route.path in ("/openapi.json", "/docs", "/redoc", AFTER_RESTORE_PATH):
            continue
        for method in getattr(route, "methods", None) or []:
            if method != "HEAD":
                out.add((method, re.sub(r"\{[^}]+\}", "{}", route.path)))
    return out


def test_every_chat_route_is_routed_to_the_chat_function(resources):
    from unittest.mock import MagicMock

    from chat_function.app import create_app

    routed = _routes(resources, "ChatFunction")
    services = MagicMock()
    services.settings.mode = "private"  # a mock's mode is no mode: the app would refuse to start
    missing = _app_routes(create_app(services)) - routed
    assert not missing, f"chat routes API Gateway does not send to the chat function: {sorted(missing)}"
    assert ("ANY", "/{proxy+}") in routed and ("OPTIONS", "/api/chat") in routed and ("OPTIONS", "/api/ai-sdk/chat") in routed


def test_every_share_route_is_routed_to_the_share_function(resources):
    from unittest.mock import MagicMock

    from share_function.app import create_share_app

    from page_assets.assets import ASSETS

    # The transcript's assets are served by the chat function in AWS; the share function serves
    # them only when it runs on its own.
    share_routes = _app_routes(create_share_app(MagicMock())) - {("GET", f"/static/{name}") for name in ASSETS}
    assert share_routes == _routes(resources, "ShareFunction")
    assert share_routes == {("GET", "/chat/shared/{}"), ("GET", "/api/shared/{}"), ("GET", "/api/shared"),
                            ("GET", "/api/shared/{}/images/{}"), ("GET", "/static/shared.js")}


def test_ingest_runs_on_a_schedule(resources):
    events = resources["IngestFunction"]["Properties"]["Events"]
    assert [e["Type"] for e in events.values()] == ["Schedule"]
    assert next(iter(events.values()))["Properties"]["Schedule"] == {"Ref": "IngestSchedule"}


def test_sweep_runs_every_fifteen_minutes(resources):
    events = resources["SweepFunction"]["Properties"]["Events"]
    assert [e["Type"] for e in events.values()] == ["Schedule"]
    assert next(iter(events.values()))["Properties"]["Schedule"] == "rate(1 minute)"
    # Longer than one run could take, shorter than the next run's start.
    assert resources["SweepFunction"]["Properties"]["Timeout"] <= 15 * 60


# ------------------------------------------------------------------ environment

SETTINGS_FIELDS = {f"GROUNDCHAT_{name.upper()}" for name in Settings.model_fields}
NEEDED = {
    # Local defaults that would be wrong in AWS must be overridden; the rest must be present.
    "ChatFunction": {
        "GROUNDCHAT_MODEL", "GROUNDCHAT_AWS_REGION", "GROUNDCHAT_TABLE_PREFIX", "GROUNDCHAT_AUTH_MODE",
        "GROUNDCHAT_OIDC_ISSUER", "GROUNDCHAT_OIDC_SECRET_ID", "GROUNDCHAT_BUDGET_USD",
        "GROUNDCHAT_USER_BUDGET_USD", "GROUNDCHAT_BUDGET_SHARDS", "GROUNDCHAT_RETENTION_DAYS", "GROUNDCHAT_HOME", "GROUNDCHAT_OPENSEARCH_ENDPOINT",
        "GROUNDCHAT_OPENSEARCH_SERVICE", "GROUNDCHAT_SEARCH_BACKEND", "GROUNDCHAT_EMBEDDING_MODEL",
        "GROUNDCHAT_RERANK", "GROUNDCHAT_ALLOWED_ORIGINS", "GROUNDCHAT_MODE", "GROUNDCHAT_VISITOR_RATE_LIMIT",
        "GROUNDCHAT_PUBLIC_BUDGET_USD", "GROUNDCHAT_VISITOR_ADDRESS_FROM", "GROUNDCHAT_TURNSTILE_SITE_KEY",
        "GROUNDCHAT_TURNSTILE_SECRET", "GROUNDCHAT_VISITOR_SECRET"},
    "ShareFunction": {"GROUNDCHAT_AWS_REGION", "GROUNDCHAT_TABLE_PREFIX", "GROUNDCHAT_HOME"},
    "IngestFunction": {
        "GROUNDCHAT_AWS_REGION", "GROUNDCHAT_HOME", "GROUNDCHAT_CORPUS_SOURCE", "GROUNDCHAT_DOCS_DIR",
        "GROUNDCHAT_OPENSEARCH_ENDPOINT", "GROUNDCHAT_OPENSEARCH_SERVICE", "GROUNDCHAT_SEARCH_BACKEND",
        "GROUNDCHAT_EMBEDDING_MODEL"},
    # Each reservation names the counters it holds; a deletion's images are in the bucket.
    "SweepFunction": {"GROUNDCHAT_AWS_REGION", "GROUNDCHAT_TABLE_PREFIX", "GROUNDCHAT_IMAGES_BUCKET"},
}


def test_every_variable_a_function_needs_is_set(template):
    for logical, needed in NEEDED.items():
        env = function_env(template, logical)
        assert needed <= set(env), f"{logical} lacks {sorted(needed - set(env))}"


def test_every_groundchat_variable_set_is_one_the_code_reads(template):
    for logical in NEEDED:
        unknown = {k for k in function_env(template, logical) if k.startswith("GROUNDCHAT_")} - SETTINGS_FIELDS
        assert not unknown, f"{logical} sets variables no setting reads: {sorted(unknown)}"


def test_every_groundchat_variable_named_in_code_is_a_setting():
    # Settings is the one list the template is checked against; a variable read elsewhere would escape it.
    named = set()
    for root in (REPO / "layers/core/groundchat", REPO / "functions"):
        for path in root.rglob("*.py"):
            named |= set(re.findall(r"\bGROUNDCHAT_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    named = {n for n in named if not n.endswith("_")}
    assert named - SETTINGS_FIELDS == set(), sorted(named - SETTINGS_FIELDS)


def test_aws_values_replace_the_local_defaults(template):
    chat = function_env(template, "ChatFunction")
    ingest = function_env(template, "IngestFunction")
    defaults = Settings()
    assert chat["GROUNDCHAT_AUTH_MODE"] == "oidc" != defaults.auth_mode
    assert chat["GROUNDCHAT_MODEL"] == {"Fn::Sub": "bedrock:${ModelId}"}
    # The local model by default (the variable unset: the app's default); Bedrock only when chosen.
    assert chat["GROUNDCHAT_EMBEDDING_MODEL"] == {"Fn::If": ["UseBedrockEmbeddings", {"Fn::Sub": "bedrock:${EmbeddingModelId}"},
                                                            {"Ref": "AWS::NoValue"}]}
    assert defaults.embedding_model.startswith("local")
    assert template["Parameters"]["EmbeddingModelId"]["Default"] == ""
    assert chat["GROUNDCHAT_HOME"].startswith("/tmp/"), "Lambda can write only under /tmp"
    assert chat["GROUNDCHAT_BUDGET_USD"] == {"Ref": "BudgetUsd"}
    assert chat["GROUNDCHAT_USER_BUDGET_USD"] == {"Ref": "UserBudgetUsd"}
    assert ingest["GROUNDCHAT_CORPUS_SOURCE"] == "official" != defaults.corpus_source
    assert chat["GROUNDCHAT_OPENSEARCH_SERVICE"] == {"Fn::If": ["UseServerless", "aoss", "es"]}
    parameters = template["Parameters"]
    assert parameters["BudgetUsd"]["Default"] == str(defaults.budget_usd)
    assert parameters["UserBudgetUsd"]["Default"] == str(defaults.user_budget_usd)
    assert chat["GROUNDCHAT_STEP_OVERRUN_USD"] == {"Ref": "StepOverrunUsd"}
    assert parameters["StepOverrunUsd"]["Default"] == str(defaults.step_overrun_usd)
    assert parameters["RetentionDays"]["Default"] == defaults.retention_days


def test_metrics_namespace_matches_the_cap_alarm(template, resources):
    namespace = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    alarm = resources["CapRefusalsAlarm"]["Properties"]
    assert alarm["Namespace"] == namespace
    assert alarm["MetricName"] == "CapRefusals"
    assert alarm["Dimensions"] == [{"Name": "service", "Value": template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]}]


def test_a_disputed_step_alarms_on_the_metric_the_guard_emits(template, resources, capsys, monkeypatch):
    from decimal import Decimal

    from groundchat.observability import record_disputed

    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    alarm = resources["SpendDisputedAlarm"]["Properties"]
    assert alarm["Namespace"] == variables["POWERTOOLS_METRICS_NAMESPACE"]
    assert alarm["Dimensions"] == [{"Name": "service", "Value": variables["POWERTOOLS_SERVICE_NAME"]}]
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", variables["POWERTOOLS_METRICS_NAMESPACE"]["Fn::Sub"].replace("${Stage}", "prod"))
    record_disputed(Decimal("0.34"))
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith('{"_aws"')]
    assert alarm["MetricName"] in [m["Name"] for m in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]]
    assert line["service"] == variables["POWERTOOLS_SERVICE_NAME"]
    assert line[alarm["MetricName"]] == [1.0] and line["DisputedUSD"] == [0.34]


# ------------------------------------------------------------------ policies

# Statements that need "*" somewhere, each explained by a comment right above it in the template.
EXPLAINED_WILDCARDS = {"ModelThroughInferenceProfile", "RerankSearchResults", "DenyPlainHttp"}


def _all_statements(resources) -> list[dict]:
    out = []
    for logical in functions_of(resources):
        out += statements(resources, logical)
    for resource in resources.values():
        props = resource.get("Properties", {})
        for key in ("PolicyDocument", "AccessPolicies"):
            if isinstance(props.get(key), dict):
                out += props[key]["Statement"]
        if resource["Type"] == "AWS::IAM::Role":
            out += props["AssumeRolePolicyDocument"]["Statement"]
            out += [st for policy in props.get("Policies", []) for st in policy["PolicyDocument"]["Statement"]]
    return out


def _has_wildcard(statement: dict) -> bool:
    values = as_list(statement.get("Action", [])) + as_list(statement.get("Resource", []))
    values += as_list(statement.get("Principal", {}) if isinstance(statement.get("Principal"), str) else [])
    return any(isinstance(v, str) and "*" in v.split(":")[-1] for v in values) or any(
        isinstance(v, dict) and "Fn::Sub" in v and re.search(r":\*:|bedrock:\*|::\*$", str(v["Fn::Sub"])) for v in values)


def test_no_wildcard_without_a_comment(resources):
    text = TEMPLATE.read_text(encoding="utf-8").splitlines()
    for statement in _all_statements(resources):
        if not _has_wildcard(statement):
            continue
        sid = statement.get("Sid")
        assert sid in EXPLAINED_WILDCARDS, f"unexplained wildcard in {statement}"
        line = next(i for i, l in enumerate(text) if re.search(rf"Sid: {sid}\b", l))
        window = [l.strip() for l in text[max(0, line - 4):line]]
        assert any(l.startswith("#") for l in window), f"{sid} has no comment saying why it needs '*'"


def test_no_policy_allows_every_action(resources):
    for statement in _all_statements(resources):
        if statement.get("Effect") == "Allow":
            for action in as_list(statement["Action"]):
                assert action != "*" and not str(action).endswith(":*"), statement


def _dynamodb(resources, logical) -> tuple[set[str], set[str]]:
    actions, tables = set(), set()
    for statement in statements(resources, logical):
        acts = {a for a in as_list(statement["Action"]) if a.startswith("dynamodb:")}
        if acts:
            actions |= acts
            for r in as_list(statement["Resource"]):
                ref = r.get("Fn::GetAtt", [None])[0] if "Fn::GetAtt" in r else re.match(r"\$\{(\w+)\.Arn\}", r["Fn::Sub"]).group(1)
                tables.add(ref)
    return actions, tables


def _dynamodb_grants(resources, logical) -> set[tuple[str, str]]:
    """(action, resource) pairs, the resource as written (a table ARN or an index path)."""
    grants = set()
    for statement in statements(resources, logical):
        for action in as_list(statement["Action"]):
            if action.startswith("dynamodb:"):
                for r in as_list(statement["Resource"]):
                    grants.add((action, "{}.Arn".format(r["Fn::GetAtt"][0]) if "Fn::GetAtt" in r else r["Fn::Sub"].replace("${", "").replace("}", "")))
    return grants


def test_share_function_only_reads_two_tables_and_the_conversations_images(resources):
    actions, tables = _dynamodb(resources, "ShareFunction")
    assert actions == {"dynamodb:GetItem", "dynamodb:Query"}
    assert tables == {"ConversationsTable", "MessagesTable"}
    assert all(not a.startswith(("bedrock", "es:", "aoss")) for s in statements(resources, "ShareFunction") for a in as_list(s["Action"]))
    # A shared conversation's image bytes: GetObject under the conversations' prefix, nothing else of S3.
    s3 = [(a, str(r)) for s in statements(resources, "ShareFunction") for a in as_list(s["Action"]) if a.startswith("s3:")
          for r in as_list(s["Resource"])]
    assert s3 == [("s3:GetObject", str({"Fn::Sub": "${ImagesBucket.Arn}/conversations/*"}))]
    assert resources["ShareFunction"]["Properties"]["Environment"]["Variables"]["GROUNDCHAT_IMAGES_BUCKET"] == {"Ref": "ImagesBucket"}


def test_chat_function_names_each_table_it_uses(resources):
    import gen_tables

    actions, tables = _dynamodb(resources, "ChatFunction")
    assert tables == {gen_tables.logical_id(t.logical) for t in gen_tables.all_tables()}
    assert "dynamodb:Scan" not in actions
    # A settle or release closes its reservation item (a transaction's Delete); the owner's delete
    # removes the conversation and what it holds. Never a usage row (the money), a grant or a run.
    deletes = {r for a, r in _dynamodb_grants(resources, "ChatFunction") if a == "dynamodb:DeleteItem"}
    assert deletes == {"BudgetTable.Arn", "ConversationsTable.Arn", "MessagesTable.Arn", "TracesTable.Arn",
                       "AnswersTable.Arn", "FeedbackTable.Arn"}
    batch_writes = {r for a, r in _dynamodb_grants(resources, "ChatFunction") if a == "dynamodb:BatchWriteItem"}
    assert batch_writes == deletes - {"BudgetTable.Arn"}
    # Grants and benchmark runs are written by operators' CLI, never by the chat.
    for statement in statements(resources, "ChatFunction"):
        if statement.get("Sid") == "GrantsAndRunsReadOnly":
            assert set(statement["Action"]) <= {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"}


def test_ingest_touches_no_table_and_no_bucket(resources):
    actions, _ = _dynamodb(resources, "IngestFunction")
    assert actions == set()
    assert not [a for s in statements(resources, "IngestFunction") for a in as_list(s["Action"]) if a.startswith("s3:")]


def test_sweep_may_only_find_and_release_reservations_and_sweep_recall_entries(resources):
    # sweep_expired: a Query on the by_expiry index, then per reservation one TransactWriteItems of
    # a Delete (the reservation) and Updates (its counters), which IAM checks as DeleteItem and
    # UpdateItem, with a ConditionCheck that no recorded settlement waits for it; a recorded
    # settlement puts its usage row (spending/settlement.py). tests/spending/test_sweep_handler.py
    # records the calls the handler makes. The recall sweep reads conversations' expiries by
    # BatchGetItem (tests/recall/test_recall_sweep.py).
    assert _dynamodb_grants(resources, "SweepFunction") == {
        ("dynamodb:Query", "BudgetTable.Arn/index/by_expiry"),
        ("dynamodb:DeleteItem", "BudgetTable.Arn"),
        ("dynamodb:UpdateItem", "BudgetTable.Arn"),
        ("dynamodb:ConditionCheckItem", "BudgetTable.Arn"),
        ("dynamodb:PutItem", "UsageTable.Arn"),
        ("dynamodb:BatchGetItem", "ConversationsTable.Arn"),
        # A deletion a crash left pending, finished (store/deletion_jobs.py, tests/store/test_deletion_jobs.py).
        ("dynamodb:Scan", "DeletionsTable.Arn"), ("dynamodb:UpdateItem", "DeletionsTable.Arn"), ("dynamodb:PutItem", "DeletionsTable.Arn"),
        # A first question whose process died is forgotten (store/deletion.py forget_dead_first_questions).
        ("dynamodb:Query", "AnswersTable.Arn/index/by_lapse"), ("dynamodb:UpdateItem", "AnswersTable.Arn"),
        ("dynamodb:GetItem", "ConversationsTable.Arn"),
        *((action, table) for action in ("dynamodb:Query", "dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
          for table in ("MessagesTable.Arn", "TracesTable.Arn", "TracesTable.Arn/index/by_caller", "FeedbackTable.Arn", "AnswersTable.Arn")),
        ("dynamodb:Query", "ConversationsTable.Arn/index/by_owner"), ("dynamodb:Query", "ConversationsTable.Arn"),
        ("dynamodb:UpdateItem", "ConversationsTable.Arn/index/by_owner"),  # one statement for the three: an index takes no update
        ("dynamodb:Query", "MessagesTable.Arn"), ("dynamodb:UpdateItem", "ConversationsTable.Arn"),
        ("dynamodb:UpdateItem", "MessagesTable.Arn"),
    }
    others = [s for s in statements(resources, "SweepFunction") if not as_list(s["Action"])[0].startswith("dynamodb:")]
    assert {s["Sid"]: sorted(as_list(s["Action"])) for s in others} == {
        "DeleteConversationImages": ["s3:DeleteObject"], "ListConversationImages": ["s3:ListBucket"],
        "SweepRecallEntriesServerless": ["aoss:APIAccessAll"],
        "SweepRecallEntries": ["es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"]}
    # The managed domain's grant names the recall index (its default name) and nothing else of the domain.
    managed = next(s for s in others if s["Sid"] == "SweepRecallEntries")
    assert [r["Fn::Sub"].split(":domain/")[1] for r in managed["Resource"]] == [
        "groundchat-${Stage}/groundchat-recall", "groundchat-${Stage}/groundchat-recall/*"]
    assert Settings.model_fields["recall_index"].default == "groundchat-recall"


# ------------------------------------------------------------------ the rest of the stack

def test_api_is_regional_throttled_and_without_cors_wildcard(resources):
    api = resources["Api"]["Properties"]
    assert api["EndpointConfiguration"] == {"Type": "REGIONAL"}
    assert api["MethodSettings"][0]["ThrottlingRateLimit"] == {"Ref": "ThrottleRateLimit"}
    assert api["MethodSettings"][0]["ThrottlingBurstLimit"] == {"Ref": "ThrottleBurstLimit"}
    assert "Cors" not in api
    assert "'*'" not in TEMPLATE.read_text(encoding="utf-8")


def test_what_api_gateway_answers_itself_carries_the_apps_security_headers(resources):
    """A throttled request, a body too large, a function that failed: API Gateway's own answers
    carry the headers the apps set, in its static-value form (single quotes it strips)."""
    from types import SimpleNamespace

    from groundchat.web.security_headers import security_headers

    app = security_headers(SimpleNamespace(mode="private"))
    responses = resources["Api"]["Properties"]["GatewayResponses"]
    assert set(responses) == {"DEFAULT_4XX", "DEFAULT_5XX"}
    for kind, response in responses.items():
        headers = {name.lower(): value for name, value in response["ResponseParameters"]["Headers"].items()}
        assert all(value[0] == value[-1] == "'" for value in headers.values()), kind
        sent = {name: value[1:-1] for name, value in headers.items()}
        assert set(sent) == set(app), kind
        for name in set(app) - {"content-security-policy"}:
            assert sent[name] == app[name], (kind, name)
        # The body is API Gateway's JSON error: it may load, run and frame nothing.
        assert sent["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'; sandbox"


def test_the_domain_runs_the_release_the_local_node_is_tested_on(resources):
    from groundchat_cli.opensearch_node import VERSION

    major_minor = ".".join(VERSION.split(".")[:2])
    assert resources["CorpusDomain"]["Properties"]["EngineVersion"] == f"OpenSearch_{major_minor}"


def test_opensearch_is_encrypted_and_reached_by_iam_roles(resources, template):
    domain = resources["CorpusDomain"]
    props = domain["Properties"]
    assert domain["Condition"] == "UseManagedDomain"
    assert props["EncryptionAtRestOptions"] == {"Enabled": True}
    assert props["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert props["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert props["AdvancedSecurityOptions"]["Enabled"] is True
    assert props["AdvancedSecurityOptions"]["InternalUserDatabaseEnabled"] is False
    # The master is an operator role, so no function can change who may read the index.
    assert props["AdvancedSecurityOptions"]["MasterUserOptions"] == {"MasterUserARN": {"Fn::GetAtt": ["SearchAdminRole", "Arn"]}}
    assert resources["SearchAdminRole"]["Condition"] == "UseManagedDomain"
    for name in ("CorpusCollection", "CorpusEncryptionPolicy", "CorpusNetworkPolicy", "CorpusDataAccessPolicy"):
        assert resources[name]["Condition"] == "UseServerless"
    assert template["Parameters"]["SearchMode"]["Default"] == "managed"


def test_alarms_cover_errors_throttles_and_cap_refusals(resources):
    alarms = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    watched = {(a["MetricName"], str(a["Dimensions"][0]["Value"])) for a in alarms}
    for fn in ("ChatFunction", "ShareFunction"):
        assert ("Errors", str({"Ref": fn})) in watched and ("Throttles", str({"Ref": fn})) in watched
    assert ("Errors", str({"Ref": "IngestFunction"})) in watched
    assert ("Errors", str({"Ref": "SweepFunction"})) in watched
    assert any(a["MetricName"] == "CapRefusals" for a in alarms)
    assert all(a["AlarmActions"] == [{"Ref": "AlarmTopic"}] for a in alarms)


def test_every_function_logs_to_a_group_with_retention(resources):
    for logical in FUNCTION_DIRS:
        group = resources[logical]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def test_sign_in_is_by_invitation_with_a_public_client(resources):
    assert resources["UserPool"]["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    assert resources["UserPoolClient"]["Properties"]["GenerateSecret"] is False
    assert "SourcesBucket" not in resources  # nothing reads fetched sources from a bucket


def test_the_chat_function_restores_from_a_snapstart_snapshot_through_its_alias(template, resources):
    props = resources["ChatFunction"]["Properties"]
    # SnapStart applies to published versions: SAM publishes one per deploy and points the alias,
    # and the API's events, at it.
    assert props["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert props["AutoPublishAlias"] == "live"
    env = function_env(template, "ChatFunction")
    # The adapter tells the app it was restored, at the route the app serves for it.
    assert env["AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH"] == AFTER_RESTORE_PATH
    # A snapshot is taken after init: the model must load there, never asynchronously after.
    assert "AWS_LWA_ASYNC_INIT" not in env
    # SnapStart does not take ephemeral storage above 512 MB.
    assert props.get("EphemeralStorage", {}).get("Size", 512) <= 512
    for other in ("ShareFunction", "IngestFunction", "SweepFunction"):
        assert "SnapStart" not in resources[other]["Properties"]


def test_the_adapter_layer_deployed_is_the_adapter_version_the_tests_run(resources):
    import glob
    from pathlib import Path

    from groundchat_cli import lambda_tools

    layers = resources["ChatFunction"]["Properties"]["Layers"][0]["Fn::If"][1:]
    versions = {int(re.search(r":layer:LambdaAdapterLayer(?:X86|Arm64):(\d+)$", layer["Fn::Sub"]).group(1)) for layer in layers}
    assert versions == {lambda_tools.ADAPTER_LAYER_VERSION}
    # Where cargo has the tested crate's source, its README names that layer version for it.
    readmes = glob.glob(str(Path.home() / f".cargo/registry/src/*/lambda_web_adapter-{lambda_tools.ADAPTER_VERSION}/README.md"))
    for readme in readmes:
        named = set(map(int, re.findall(r"LambdaAdapterLayerX86:(\d+)", Path(readme).read_text(encoding="utf-8"))))
        assert named == {lambda_tools.ADAPTER_LAYER_VERSION}, readme


def test_the_chat_function_caps_glibcs_malloc_arenas(template):
    # Each answering thread would keep an arena of its own; the chat's memory was 80-105 MiB higher.
    assert function_env(template, "ChatFunction")["MALLOC_ARENA_MAX"] == "2"
    assert "MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2}" in (REPO / "Makefile").read_text()


def test_the_chat_function_fixes_glibcs_mmap_threshold(template):
    # Left dynamic, the threshold rises after the first large free and the model's freed tensors
    # stay in the heap: 60-70 MiB more after the first answer, which malloc_trim hands back.
    assert function_env(template, "ChatFunction")["MALLOC_MMAP_THRESHOLD_"] == "131072"
    # `make run` ingests in the chat's process first: its warm-up fixes the threshold after that.
    assert "MALLOC_MMAP_THRESHOLD_" not in (REPO / "Makefile").read_text()
