"""Configuration: environment variables prefixed GROUNDCHAT_, read once per process.

Every setting the code reads is declared here, so the README table and the SAM template can be
checked against one list.
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from groundchat import BOT_NAME_DEFAULT


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GROUNDCHAT_", extra="ignore")

    bot_name: str = BOT_NAME_DEFAULT
    # Which model answers: "offline", "bedrock:<model id>" or "openai:<model id>".
    model: str = "offline"
    openai_base_url: str = ""
    openai_api_key: str = ""
    aws_region: str = Field(default="eu-west-1")
    prices_file: Path | None = None

    budget_usd: Decimal = Decimal("1")
    user_budget_usd: Decimal = Decimal("0.50")
    budget_period: str = "total"  # "total" | "month"

    # State: DynamoDB. Empty endpoint means AWS; locally the stack points it at moto's server.
    dynamodb_endpoint: str = ""
    table_prefix: str = "groundchat-"
    retention_days: int = 90

    # Auth: "dev" verifies HS256 tokens signed with a local secret; "oidc" verifies JWTs by JWKS.
    auth_mode: str = "dev"
    dev_secret: str = ""
    dev_user: str = "dev"
    oidc_issuer: str = ""
    oidc_audience: str = ""
    oidc_jwks_url: str = ""

    # Local state directory (dev secret, local endpoint file, embedded index).
    home: Path = Path(".groundchat")
    # Where the ingest reads its sources locally (the official addresses are used in AWS).
    corpus_dir: Path = Path("../shared/corpus")
    docs_dir: Path = Path("docs")
    # Corpus and search: "local" reads corpus_dir; "official" fetches the official addresses.
    corpus_source: str = "local"
    # "embedded" (SQLite file under home) unless an OpenSearch endpoint is set.
    search_backend: str = "auto"
    opensearch_endpoint: str = ""
    opensearch_index_alias: str = "groundchat-corpus"
    opensearch_service: str = "es"  # "es" (managed domain) or "aoss" (Serverless), for SigV4
    # In AWS, the S3 bucket the ingest may keep fetched sources in (the stack sets it); empty locally.
    sources_bucket: str = ""
    # "local:minilm-int8" or "bedrock:amazon.titan-embed-text-v2:0".
    embedding_model: str = "local:minilm-int8"
    # "none" or "bedrock:<rerank model id>".
    rerank: str = "none"
    search_max_excerpts: int = 8
    search_max_excerpt_chars: int = 1200

    # How long conversations are shortened for the model: visitor-qa | standard | long-authoring.
    history_profile: str = "standard"
    max_steps: int = 6
    max_output_tokens: int = 3000
    max_question_chars: int = 2000
    max_conversation_messages: int = 40
    # Our own ceiling on one tool result as stored and sent (characters of its JSON).
    max_tool_result_chars: int = 60_000
    allowed_origins: str = ""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings_cache() -> None:
    """Tests change the environment; they call this to make the next read see it."""
    get_settings.cache_clear()
