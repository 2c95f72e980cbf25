"""The `groundchat` command and its local stack are part of the product: they never import the test
kit (test doubles and checkers), so the command runs where the test kit is not installed."""
from __future__ import annotations

import ast

from tests.conftest import REPO_ROOT

CLI = REPO_ROOT / "cli" / "groundchat_cli"


def imported_top_levels(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_command_imports_nothing_of_the_test_kit():
    offenders = sorted(p.name for p in CLI.rglob("*.py") if "groundchat_testkit" in imported_top_levels(p.read_text()))
    assert offenders == []


def test_the_check_sees_an_import_made_inside_a_function():
    assert "groundchat_testkit" in imported_top_levels("def f():\n    from groundchat_testkit.scripted import Step\n")
