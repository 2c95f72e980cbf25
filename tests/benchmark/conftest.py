"""Fixtures for the runs tests: the sample in moto, and the data tools behind a registry."""
from __future__ import annotations

import json

import pytest

from groundchat.auth.callers import Caller


def jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture(scope="session")
def sample_lines() -> list[dict]:
    from groundchat_cli.sample import generate_runs

    return generate_runs()


@pytest.fixture
def writer(dynamo):
    from groundchat.store.runs import RunWriter

    return RunWriter(dynamo)


@pytest.fixture
def queries(dynamo):
    from groundchat.store.runs import RunQueries

    return RunQueries(dynamo)


def _load(writer, lines: list[dict]) -> list[dict]:
    from groundchat.store.runs_import import import_text
    from tests.moto_snapshot import runs_imported

    def store():
        report = import_text(writer, jsonl(lines))
        assert report.ok and len(report.imported) == len(lines)

    runs_imported(lines, store)
    return lines


@pytest.fixture
def loaded_full(writer, sample_lines):
    """The whole sample imported; returns its lines, the ground truth the tests compute from."""
    return _load(writer, sample_lines)


SMALL_TASKS = ("signup-form", "product-grid", "pricing-table", "nav-header")


@pytest.fixture
def loaded(writer, sample_lines):
    """A slice of the sample (every model and context, 4 tasks, 2 labels: 160 runs). moto spends
    a few milliseconds serializing each item, so most tests read this rather than all 480."""
    return _load(writer, [x for x in sample_lines if x["task"] in SMALL_TASKS and x["label"] in ("round-1", "round-2")])


def make_registry(permissions: set[str]):
    from groundchat.tools import ToolRegistry
    from groundchat.tools.data_tools import DATA_TOOLS

    async def can(permission: str, caller: Caller) -> bool:
        return permission in permissions

    return ToolRegistry(DATA_TOOLS, can=can)


@pytest.fixture
def registry_with():
    """A registry whose caller holds exactly the given permissions."""
    return make_registry


@pytest.fixture
def registry():
    from groundchat.auth.callers import DOCS_READ, RUNS_READ

    return make_registry({RUNS_READ, DOCS_READ})


@pytest.fixture
def ctx(queries):
    from groundchat.tools import ToolContext

    return ToolContext(caller=Caller(id="tester"), runs=queries)
