"""Fixtures for the runs tests: the sample in moto, and the data tools behind a registry."""
from __future__ import annotations

import json

import pytest

from groundchat.auth_types import Caller


def jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture(scope="session")
def sample_lines() -> list[dict]:
    from groundchat.sample import generate_runs

    return generate_runs()


@pytest.fixture
def writer(dynamo):
    from groundchat.store.runs import RunWriter

    return RunWriter(dynamo)


@pytest.fixture
def queries(dynamo):
    from groundchat.store.runs import RunQueries

    return RunQueries(dynamo)


@pytest.fixture
def loaded(writer, sample_lines):
    """The whole sample imported; returns its lines, the ground truth the tests compute from."""
    from groundchat.runs_import import import_text

    report = import_text(writer, jsonl(sample_lines))
    assert report.ok and len(report.imported) == len(sample_lines)
    return sample_lines


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
    from groundchat.auth_types import DOCS_READ, RUNS_READ

    return make_registry({RUNS_READ, DOCS_READ})


@pytest.fixture
def ctx(queries):
    from groundchat.tools import ToolContext

    return ToolContext(caller=Caller(id="tester"), runs=queries)
