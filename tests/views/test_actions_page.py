"""Forms' actions: the registry, the addresses it builds, and the page's copy of it."""
import json
import re
import shutil
import subprocess
from importlib import resources

import pytest

from groundchat.views.actions import build_address, page_registry, returned_values


def page_copy() -> dict:
    js = resources.files("page_assets").joinpath("transcript.js").read_text()
    return json.loads(re.search(r"const VIEW_ACTIONS = (\{.*\});\n", js).group(1))


def test_the_page_builds_addresses_from_the_same_registry():
    assert page_copy() == page_registry() == {
        "open-runs": {"path": "/chat/runs", "params": {"model": "model", "context": "context", "task": "task", "label": "label"}},
        "compare-runs": {"path": "/chat/runs", "params": {"run_a": "run", "run_b": "compare"}},
    }


def test_addresses_are_built_from_the_action_and_the_values():
    assert build_address("open-runs", {"context": "guidelines-axe", "model": ""}) == "/chat/runs?context=guidelines-axe"
    assert build_address("open-runs", {"model": "atlas large", "task": "signup-form"}) == "/chat/runs?model=atlas+large&task=signup-form"
    assert build_address("open-runs", {}) == "/chat/runs"
    assert build_address("compare-runs", {"run_a": "run-1", "run_b": "run-2"}) == "/chat/runs?run=run-1&compare=run-2"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_script_builds_the_same_addresses():
    script = resources.files("page_assets").joinpath("transcript.js").read_text()
    probe = script + """
const { actionAddress } = window.GroundchatTranscript;
console.log(JSON.stringify([
  actionAddress("open-runs", {context: "guidelines-axe", model: ""}),
  actionAddress("open-runs", {model: "atlas large", task: "signup-form"}),
  actionAddress("compare-runs", {run_a: "run-1", run_b: "run-2"}),
  actionAddress("drop-tables", {x: "1"}),
]));"""
    out = subprocess.run(["node", "-e", "var window = {};\n" + probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["/chat/runs?context=guidelines-axe", "/chat/runs?model=atlas+large&task=signup-form",
                               "/chat/runs?run=run-1&compare=run-2", None]


def test_valid_option_values_are_the_names_data_tools_returned():
    results = [
        {"name": "compare_contexts", "grounding": "figures", "result": {"by_context": [{"model": "all models", "context": "none"}],
                                                "rows": [{"model": "atlas-large", "context": "checklist"}]}},
        {"name": "list_runs", "grounding": "figures", "result": {"runs": [{"run_id": "run-1", "task": "signup-form", "label": "round-1"}]}},
        {"name": "search_docs", "grounding": "text", "result": {"excerpts": [{"context": "not a context level"}]}},
    ]
    assert returned_values(results) == {"model": {"atlas-large"}, "context": {"none", "checklist"},
                                        "task": {"signup-form"}, "label": {"round-1"}, "run_id": {"run-1"}}

