"""Every offline check that exists for the template: cfn-lint, the SAM translator, `sam validate`."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.infra.conftest import REPO, TEMPLATE, load_template


def test_cfn_lint_is_clean_including_informational_checks():
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    result = subprocess.run([str(cfn_lint), "--include-checks", "I", "--", str(TEMPLATE)],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""


def test_no_rule_is_suppressed_without_a_comment():
    lines = TEMPLATE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if re.search(r"ignore_checks|cfn-lint:|cfn_nag|checkov:skip", line):
            above = lines[number - 1].strip() if number else ""
            assert above.startswith("#") or "#" in line, f"line {number + 1} suppresses a rule without saying why"
    for config in (".cfnlintrc", ".cfnlintrc.yaml", ".cfnlintrc.json"):
        assert not (REPO / config).exists() or "#" in (REPO / config).read_text(), f"{config} suppresses without comment"


def _translate(parameters: dict[str, str]) -> dict:
    """What CloudFormation receives after `sam deploy`: the SAM transform, run locally."""
    samtranslator = pytest.importorskip("samtranslator", reason="aws-sam-translator is in the test extras")
    from samtranslator.translator.transform import transform

    template = load_template()
    for resource in template["Resources"].values():
        props = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if key in props:  # `sam deploy` uploads the directory and writes its S3 address here
                props[key] = f"s3://artifacts/{props[key].replace('/', '-')}.zip"

    class NoManagedPolicies:
        """Our functions name no managed policy by name, so nothing needs looking up in IAM."""

        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    from packaging.version import Version

    assert Version(samtranslator.__version__) >= Version("1.109")  # ResponseTransferMode arrived in 1.109
    return transform(template, parameters, NoManagedPolicies())


@pytest.fixture(scope="module")
def translated():
    return _translate({"Stage": "dev"})


def _integration(translated, path: str, method: str) -> dict:
    body = translated["Resources"]["Api"]["Properties"]["Body"]
    return body["paths"][path][method]["x-amazon-apigateway-integration"]


STREAMED = (("/api/chat", "post"), ("/api/ai-sdk/chat", "post"),  # our frames, and the AI SDK's parts
            ("/api/ai-sdk/chat/{id}/stream", "get"))  # the AI SDK's resume


@pytest.mark.parametrize("path, method", STREAMED)
def test_chat_post_streams_for_fifteen_minutes(translated, path, method):
    integration = _integration(translated, path, method)
    assert integration["type"] == "aws_proxy"
    assert integration["responseTransferMode"] == "STREAM"
    assert integration["timeoutInMillis"] == 900000
    uri = integration["uri"]["Fn::Sub"]
    # Through the alias SAM publishes (AutoPublishAlias): a SnapStart function runs only as a version.
    assert "/2021-11-15/functions/${ChatFunctionAliaslive}/response-streaming-invocations" in uri


def test_every_other_route_is_buffered(translated):
    paths = translated["Resources"]["Api"]["Properties"]["Body"]["paths"]
    for path, methods in paths.items():
        for method, operation in methods.items():
            integration = operation.get("x-amazon-apigateway-integration", {})
            if (path, method) in STREAMED:
                continue
            assert "responseTransferMode" not in integration, (path, method)
            assert integration["uri"]["Fn::Sub"].endswith("/invocations"), (path, method)


def test_share_paths_invoke_the_share_function(translated):
    for path in ("/chat/shared/{id}", "/api/shared/{id}", "/api/shared"):
        assert "${ShareFunction.Arn}" in _integration(translated, path, "get")["uri"]["Fn::Sub"]


def test_only_our_stage_is_created(translated):
    stages = [k for k, v in translated["Resources"].items() if v["Type"] == "AWS::ApiGateway::Stage"]
    assert len(stages) == 1
    stage = translated["Resources"][stages[0]]["Properties"]
    assert stage["StageName"] == {"Ref": "Stage"}
    assert stage["MethodSettings"][0]["ThrottlingRateLimit"] == {"Ref": "ThrottleRateLimit"}


def test_both_search_modes_translate(translated):
    serverless = _translate({"Stage": "prod", "SearchMode": "serverless"})
    for out in (translated, serverless):
        assert "ChatFunctionRole" in out["Resources"]
        assert json.dumps(out).count("response-streaming-invocations") == len(STREAMED)


@pytest.mark.skipif(shutil.which("sam") is None, reason=(
    "the SAM CLI is not installed: it weighs about 340 MB (Docker SDK, Flask, cookiecutter...), so "
    "`make test` does not install it; cfn-lint and the SAM translator above run the same checks"))
def test_sam_validate_lint():
    env = {**os.environ, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "eu-west-1"), "SAM_CLI_TELEMETRY": "0"}
    result = subprocess.run(["sam", "validate", "--lint", "--template", str(TEMPLATE)],
                            capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout + result.stderr
