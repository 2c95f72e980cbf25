"""The template parsed as CloudFormation reads it (short tags become Fn:: forms)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "template.yaml"
sys.path.insert(0, str(REPO / "infra"))


def load_template() -> dict[str, Any]:
    from cfnlint.decode import decode

    parsed, problems = decode(str(TEMPLATE))
    assert not problems, problems
    return json.loads(json.dumps(parsed))  # plain dicts and strings


@pytest.fixture(scope="session")
def template() -> dict[str, Any]:
    return load_template()


@pytest.fixture(scope="session")
def resources(template) -> dict[str, Any]:
    return template["Resources"]


def functions_of(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in resources.items() if v["Type"] == "AWS::Serverless::Function"}


def function_env(template: dict[str, Any], logical: str) -> dict[str, Any]:
    """Globals' variables overlaid with the function's own, as SAM merges them."""
    merged = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    own = template["Resources"][logical]["Properties"].get("Environment", {}).get("Variables", {})
    merged.update(own)
    return merged


def statements(resources: dict[str, Any], logical: str) -> list[dict[str, Any]]:
    """A function's inline policy statements, with both branches of any Fn::If."""
    out: list[dict[str, Any]] = []
    for policy in resources[logical]["Properties"].get("Policies", []):
        for statement in policy["Statement"]:
            if "Fn::If" in statement:
                out += [branch for branch in statement["Fn::If"][1:] if isinstance(branch, dict) and "Effect" in branch]
            else:
                out.append(statement)
    return out


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
