"""Fixtures for the spending tests: priced test models.

The shared `dynamo` fixture makes moto as atomic as DynamoDB (groundchat_cli.moto_store.make_moto_faithful):
without it, moto checks and writes a transaction item by item, so threads could interleave inside
one "transaction" and the concurrency tests would measure moto, not our code. The requests still
race as they would against AWS (64 coroutines, a pool of worker threads, interleaved reservations
and settlements).
"""
from __future__ import annotations

import json
import threading

import pytest

SCRIPTED_PRICE = {"input_per_mtok": "1.00", "output_per_mtok": "2.00"}


@pytest.fixture
def prices_file(tmp_path, monkeypatch):
    """The operator's prices file, with the test models entered deliberately."""

    def write(entries: dict) -> None:
        path = tmp_path / "prices.json"
        path.write_text(json.dumps(entries))
        monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(path))
        from groundchat.config import reset_settings_cache

        reset_settings_cache()

    write({
        "scripted": SCRIPTED_PRICE,
        "scripted-provider": {**SCRIPTED_PRICE, "trust_provider_cost": True},
        "scripted-untrusted": {**SCRIPTED_PRICE, "trust_provider_cost": False},
    })
    return write


@pytest.fixture
def budget_settings(prices_file, monkeypatch):
    def make(chat: str = "1", user: str = "0.50", period: str = "total"):
        monkeypatch.setenv("GROUNDCHAT_BUDGET_USD", chat)
        monkeypatch.setenv("GROUNDCHAT_USER_BUDGET_USD", user)
        monkeypatch.setenv("GROUNDCHAT_BUDGET_PERIOD", period)
        from groundchat.config import get_settings, reset_settings_cache

        reset_settings_cache()
        return get_settings()

    return make

