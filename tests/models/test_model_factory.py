"""GROUNDCHAT_MODEL -> a model, and a status that says exactly what to set, without calling anything."""
from __future__ import annotations

import pytest

from groundchat.config import Settings
from groundchat.models.bedrock import BedrockModel
from groundchat.models.adapters import build_model, model_status
from groundchat.models.openai_compat import OpenAICompatModel

PRICED_BEDROCK = "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture
def no_aws_credentials(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-such-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-such-credentials"))
    # No instance-metadata probe: the test must not touch the network.
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_bedrock_without_credentials_is_disabled_and_says_what_to_set(no_aws_credentials):
    status = model_status(Settings(model=PRICED_BEDROCK))
    assert status.enabled is False
    assert "needs AWS credentials" in status.reason and PRICED_BEDROCK in status.reason
    for what in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "IAM role", "GROUNDCHAT_AWS_REGION", "GROUNDCHAT_MODEL=offline"):
        assert what in status.how_to_fix
    enabled, reason, how_to_fix = status  # a plain (enabled, reason, how_to_fix) tuple
    assert (enabled, reason, how_to_fix) == (False, status.reason, status.how_to_fix)


def test_bedrock_with_credentials_is_enabled_without_calling_it(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLETESTING00")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings(model=PRICED_BEDROCK)
    assert model_status(settings).enabled is True
    model = build_model(settings)
    assert isinstance(model, BedrockModel)
    assert model.model_id == PRICED_BEDROCK  # the key the price table uses
    assert model.bedrock_model_id == "anthropic.claude-3-5-haiku-20241022-v1:0"
    assert model._client is None  # nothing built, nothing called


def test_a_model_missing_from_the_price_table_is_disabled(monkeypatch):
    from groundchat.services import Services

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLETESTING00")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings(model="bedrock:meta.llama-unpriced-v1:0")
    assert model_status(settings).enabled is True  # configured: the adapter's part is done
    enabled, reason, how_to_fix = Services(settings, dynamo=None).model_status()
    assert enabled is False
    assert "no usable price" in reason
    assert "GROUNDCHAT_PRICES_FILE" in how_to_fix


@pytest.mark.parametrize(
    ("base_url", "key", "named"),
    [
        ("", "", ["GROUNDCHAT_OPENAI_BASE_URL", "GROUNDCHAT_OPENAI_API_KEY"]),
        ("https://gateway.example/v1", "", ["GROUNDCHAT_OPENAI_API_KEY"]),
        ("", "sk-test-0123456789", ["GROUNDCHAT_OPENAI_BASE_URL"]),
    ],
)
def test_openai_without_url_or_key_names_what_is_missing(base_url, key, named):
    status = model_status(Settings(model="openai:gpt-4.1-mini", openai_base_url=base_url, openai_api_key=key))
    assert status.enabled is False
    for name in named:
        assert name in status.reason and name in status.how_to_fix
    if key:
        assert key not in status.reason + status.how_to_fix


def test_openai_configured_builds_the_adapter_from_the_environment(monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_MODEL", "openai:gpt-4.1-mini")
    monkeypatch.setenv("GROUNDCHAT_OPENAI_BASE_URL", "https://gateway.example/v1")
    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", "sk-test-0123456789abcdef")
    settings = Settings()
    assert model_status(settings).enabled is True
    model = build_model(settings)
    assert isinstance(model, OpenAICompatModel)
    assert (model.model_id, model.remote_model_id, model.url) == ("openai:gpt-4.1-mini", "gpt-4.1-mini", "https://gateway.example/v1/chat/completions")
    assert "sk-test" not in repr(model)


@pytest.mark.parametrize("value", ["claude", "bedrock:", "openai:  ", "azure:gpt-4"])
def test_unknown_or_empty_model_settings_are_disabled(value):
    status = model_status(Settings(model=value))
    assert status.enabled is False
    assert "GROUNDCHAT_MODEL" in status.how_to_fix
    with pytest.raises(ValueError):
        build_model(Settings(model=value))


def test_offline_is_always_enabled_and_built_lazily():
    settings = Settings(model="offline")
    status = model_status(settings)
    assert status.enabled is True and status.how_to_fix == ""
    from groundchat.services import Services

    model = Services(settings, dynamo=None).model
    assert type(model).__name__ == "OfflineAnswerer"
    assert model.model_id == "offline"
    with pytest.raises(ValueError):
        build_model(settings)  # the adapters build hosted models only
