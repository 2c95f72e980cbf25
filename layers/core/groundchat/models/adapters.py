"""GROUNDCHAT_MODEL -> the model that answers, and whether it can answer at all.

`model_status` never calls a model: it looks at configuration and credentials only, so the status
endpoint and the 503 can say exactly what to set while nothing is called or spent.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from groundchat.models.messages import ChatModel

if TYPE_CHECKING:
    from groundchat.config import Settings

MODEL_SETTING = "GROUNDCHAT_MODEL"
CHOICES = "offline, bedrock:<model id> or openai:<model id>"


class ModelStatus(NamedTuple):
    enabled: bool
    reason: str
    how_to_fix: str


def parse_model_setting(value: str) -> tuple[str, str]:
    """("offline"|"bedrock"|"openai"|<unknown>, model id) from the configured string."""
    value = (value or "").strip()
    if value == "offline":
        return "offline", ""
    kind, _, model_id = value.partition(":")
    return kind, model_id.strip()


def model_status(settings: Settings) -> ModelStatus:
    kind, model_id = parse_model_setting(settings.model)
    if kind == "offline":
        return ModelStatus(True, "The offline answerer is configured: it needs no credentials and costs nothing.", "")
    if kind not in ("bedrock", "openai"):
        return ModelStatus(False, f"{MODEL_SETTING}={settings.model!r} is not a model choice.", f"Set {MODEL_SETTING} to {CHOICES}.")
    if not model_id:
        return ModelStatus(False, f"{MODEL_SETTING}={settings.model!r} names no model id.", f"Set {MODEL_SETTING}={kind}:<model id>.")
    missing = _bedrock_missing(settings) if kind == "bedrock" else _openai_missing(settings)
    if missing is not None:
        return missing
    # Whether its spending can be capped (a price) is the composition's to ask: services.py.
    return ModelStatus(True, f"{settings.model} is configured.", "")


def _bedrock_missing(settings: Settings) -> ModelStatus | None:
    import boto3

    # Resolves the standard chain (environment, profile files, SSO, container and instance roles)
    # without signing or sending a request to Bedrock.
    credentials = boto3.Session(region_name=settings.aws_region or None).get_credentials()
    if credentials is None:
        return ModelStatus(
            False,
            f"{MODEL_SETTING}={settings.model} needs AWS credentials, and none were found.",
            "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), "
            "or AWS_PROFILE, or run with an IAM role allowed bedrock:InvokeModelWithResponseStream; "
            "set GROUNDCHAT_AWS_REGION to a region where the model is enabled. "
            f"Or set {MODEL_SETTING}=offline.",
        )
    if not settings.aws_region:
        return ModelStatus(False, "No AWS region is set for Bedrock.", "Set GROUNDCHAT_AWS_REGION (e.g. eu-west-1).")
    return None


def _openai_missing(settings: Settings) -> ModelStatus | None:
    unset = [name for name, value in (
        ("GROUNDCHAT_OPENAI_BASE_URL", settings.openai_base_url),
        ("GROUNDCHAT_OPENAI_API_KEY", settings.openai_api_key),
    ) if not (value or "").strip()]
    if not unset:
        return None
    return ModelStatus(
        False,
        f"{MODEL_SETTING}={settings.model} needs {' and '.join(unset)}, which {'is' if len(unset) == 1 else 'are'} not set.",
        f"Set {' and '.join(unset)} (the gateway's address ending before /chat/completions, e.g. "
        "https://openrouter.ai/api/v1, and its key; a local server without keys accepts any value). "
        f"Or set {MODEL_SETTING}=offline.",
    )


def build_model(settings: Settings) -> ChatModel:
    """The configured hosted model. Raises ValueError for a setting that names no model we know;
    the offline answerer is a wing of its own (groundchat/offline/), built by the composition."""
    kind, model_id = parse_model_setting(settings.model)
    if kind == "bedrock" and model_id:
        from groundchat.models.bedrock import BedrockModel

        return BedrockModel(model_id, region=settings.aws_region or None, price_id=settings.model.strip())
    if kind == "openai" and model_id:
        from groundchat.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel(
            model_id,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            price_id=settings.model.strip(),
        )
    raise ValueError(f"{MODEL_SETTING}={settings.model!r}: expected {CHOICES}")
