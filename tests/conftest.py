"""Shared fixtures: settings isolated per test, and a moto-backed DynamoDB store."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test sees the developer's credentials, model or local stack."""
    for key in list(os.environ):
        if key.startswith("GROUNDCHAT_") or key.startswith("AWS_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("GROUNDCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GROUNDCHAT_DEV_SECRET", "test-secret-for-hs256-signing-0123456789")
    monkeypatch.setenv("GROUNDCHAT_CORPUS_DIR", str(REPO_ROOT.parent / "shared" / "corpus"))
    monkeypatch.setenv("GROUNDCHAT_DOCS_DIR", str(REPO_ROOT / "docs"))
    from groundchat.config import reset_settings_cache

    reset_settings_cache()
    yield
    reset_settings_cache()


@pytest.fixture
def settings():
    from groundchat.config import get_settings

    return get_settings()


@pytest.fixture
def dynamo(settings):
    """A DynamoDB on moto with every table created."""
    from moto import mock_aws

    from groundchat.store.dynamo import Dynamo, create_tables

    with mock_aws():
        d = Dynamo(settings)
        create_tables(d)
        yield d


@pytest.fixture
def corpus_dir(settings):
    path = Path(settings.corpus_dir)
    if not (path / "README.md").exists():
        pytest.skip(f"the source corpus is not at {path} (it sits beside the repo as ../shared/corpus on dev machines and CI)")
    return path
