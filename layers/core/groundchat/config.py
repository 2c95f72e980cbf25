"""Configuration: environment variables prefixed GROUNDCHAT_, read once per process.

Every setting the code reads is declared here, so the README table and the SAM template can be
checked against one list.
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from groundchat import BOT_NAME_DEFAULT

# The history profiles (`groundchat.chat.history.PROFILES` defines what each does). Named here so an
# unknown name is refused when the settings load, before anything is served.
HISTORY_PROFILE_NAMES: tuple[str, ...] = ("visitor-qa", "standard", "long-authoring")


class SettingsError(ValueError):
    """A setting the process cannot run with, said in one line (which variable, what is allowed)."""


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
    # The chat's total and the visitors' ceiling each held as this many counters that lend each
    # other room (store/budget_shards.py), so concurrent steps write different items; 1 is one
    # counter. The bound is what one rebase transaction can write.
    budget_shards: int = Field(default=1, ge=1, le=64)
    # What one model step may be charged beyond its reservation when its provider reports more
    # than the step could cost; anything reported past it is recorded as disputed, not charged
    # (spending/overrun.py). Concurrent steps pass a cap together by at most this much.
    step_overrun_usd: Decimal = Field(default=Decimal("0.05"), ge=0)

    # State: DynamoDB. Empty endpoint means AWS; locally the stack points it at moto's server.
    dynamodb_endpoint: str = ""
    table_prefix: str = "groundchat-"
    # Conversations expire this many days after their last answer, every item of one at once.
    retention_days: int = Field(default=90, ge=1)

    # Image attachments: kept in S3 (the stack names its bucket; locally moto's S3 beside DynamoDB).
    images_bucket: str = "groundchat-images"
    images_endpoint: str = ""
    max_images_per_question: int = Field(default=5, ge=0, le=20)
    # Per image as uploaded, and for all images of one question. In AWS the whole request reaches
    # the function base64-encoded inside Lambda's 6 MB invocation payload, hence 4 MiB in all.
    max_image_bytes: int = Field(default=3 * 1024 * 1024, ge=1024)
    max_images_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    # Decoded size: an image over this many pixels is refused before it is decoded (a small file
    # can declare a huge canvas); 25 MP at 4 bytes a pixel is 100 MB of memory at most.
    max_image_pixels: int = Field(default=25_000_000, ge=1)

    # Auth: "dev" verifies HS256 tokens signed with a local secret; "oidc" verifies JWTs by JWKS.
    auth_mode: str = "dev"
    dev_secret: str = ""
    dev_user: str = "dev"
    oidc_issuer: str = ""
    oidc_audience: str = ""
    oidc_jwks_url: str = ""
    # The page's OIDC sign-in (authorization code + PKCE) with any provider: its endpoints come from
    # `{oidc_issuer}/.well-known/openid-configuration`. The redirect URL is this app's
    # /auth/callback as registered with the provider; the sign-out URL is where the provider sends
    # people back after signing out (the chat page beside the callback when empty).
    oidc_client_id: str = ""
    oidc_client_secret: str = ""
    oidc_redirect_url: str = ""
    oidc_sign_out_url: str = ""
    oidc_scopes: str = "openid email profile"
    # Seals the sign-in cookies (state, refresh token); at least 32 characters.
    session_secret: str = ""
    # How long a sign-in lasts without a new visit to the provider (the refresh cookie's age).
    session_days: int = 30
    # Name or ARN of a Secrets Manager secret, a JSON object whose keys are the setting names above
    # (oidc_client_id, oidc_client_secret, oidc_redirect_url, oidc_sign_out_url, session_secret):
    # it fills those left empty. In AWS the template writes the app client, the API's address and a
    # generated session secret there, values no function environment can hold without a cycle.
    oidc_secret_id: str = ""

    # Local state directory (dev secret, local endpoint file, embedded index).
    home: Path = Path(".groundchat")
    # Where the ingest reads its sources locally (the official addresses are used in AWS).
    corpus_dir: Path = Path("../shared/corpus")
    docs_dir: Path = Path("docs")
    # Corpus and search: "local" reads corpus_dir; "official" fetches the official addresses.
    corpus_source: str = "local"
    # A note out of date with the converted text (corpus/notes.py): "stop" fails the ingest and keeps
    # the serving index; "warn" logs it and indexes without that note (the scheduled ingest in AWS).
    notes_check: str = "stop"
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
    # The graph leg in a hybrid search (search/graph_leg.py): "on" or "off". On because it was never
    # below the search without it on the unread sets, on either backend (docs/engineering/
    # retrieval-eval.md); a search's own include_graph forces it either way.
    search_graph: str = "on"
    # Recall, the caller's own past conversations as a search source: off | explicit | auto.
    recall: str = "explicit"
    # Its OpenSearch index in AWS (locally a SQLite file under home).
    recall_index: str = "groundchat-recall"

    # How long conversations are shortened for the model: visitor-qa | standard | long-authoring.
    history_profile: str = "standard"
    # An answer built on a source dated longer ago than this says so (0: never).
    stale_source_days: int = Field(default=1095, ge=0)
    max_steps: int = 6
    max_output_tokens: int = 3000
    max_question_chars: int = 2000
    # While an answer runs and nothing else is sent, an SSE comment (": ping") this often, so a proxy
    # or load balancer that closes idle connections never sees a silent stream during a long tool
    # call or model step. Below the shortest idle timeout we deploy behind (README); 0 turns it off.
    sse_heartbeat_seconds: float = Field(default=5.0, ge=0)
    max_conversation_messages: int = 40
    # Our own ceiling on one tool result as stored and sent (characters of its JSON).
    max_tool_result_chars: int = 60_000
    allowed_origins: str = ""

    # Public mode (README "Going public"): "private" serves signed-in callers only; "public" also
    # serves anonymous visitors, and refuses to start without the three guards below.
    mode: str = "private"
    # Guard 1, the rate limit: questions per visitor address per sliding window (0: none).
    visitor_rate_limit: int = 0
    visitor_rate_window_seconds: int = 60
    # Where a visitor's address comes from: "client" (the connection, locally) or "api-gateway"
    # (the request context the Lambda Web Adapter forwards). Only its keyed hash is ever stored.
    visitor_address_from: str = "client"
    # Signs visitor sessions and keys the address hash; shared by every instance (Secrets Manager in AWS).
    visitor_secret: str = ""
    visitor_session_minutes: int = 30
    # What an anonymous visitor may do (never traces.read), and how much history the model sees.
    visitor_permissions: str = "chat.use,docs.read,runs.read"
    visitor_history_profile: str = "visitor-qa"
    # Dev auth trusts whoever reaches the server, so a public chat refuses it unless this says
    # "local-only" (`groundchat serve --public` sets it; a Lambda refuses it). Even then the dev
    # sign-in route is not served: in public mode strangers ask as visitors, never as the dev user.
    public_dev_auth: str = ""
    # Guard 2, the bot wall: Cloudflare Turnstile (the URLs point at a stub locally and in tests).
    turnstile_site_key: str = ""
    turnstile_secret: str = ""
    turnstile_verify_url: str = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
    turnstile_script_url: str = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit"
    turnstile_timeout_seconds: float = 5.0
    # Guard 3, the spending ceiling for all anonymous visitors together (beside the chat's total).
    public_budget_usd: Decimal | None = None

    @field_validator("public_budget_usd", mode="before")
    @classmethod
    def _unset_when_empty(cls, value: object) -> object:
        # The template passes an empty parameter as "": that is no ceiling, not a bad number.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("recall")
    @classmethod
    def _known_recall_mode(cls, value: str) -> str:
        if value not in ("off", "explicit", "auto"):
            raise ValueError(f"unknown recall mode {value!r}; valid: off, explicit, auto")
        return value

    @field_validator("notes_check")
    @classmethod
    def _known_notes_check(cls, value: str) -> str:
        if value not in ("stop", "warn"):
            raise ValueError(f"unknown notes check {value!r}; valid: stop, warn")
        return value

    @field_validator("search_graph")
    @classmethod
    def _known_search_graph(cls, value: str) -> str:
        if value not in ("on", "off"):
            raise ValueError(f"unknown graph leg setting {value!r}; valid: on, off")
        return value

    @field_validator("history_profile")
    @classmethod
    def _known_history_profile(cls, value: str) -> str:
        if value not in HISTORY_PROFILE_NAMES:
            raise ValueError(f"unknown history profile {value!r}; valid: {', '.join(HISTORY_PROFILE_NAMES)}")
        return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(settings_problem(exc)) from None


def settings_problem(exc: ValidationError) -> str:
    """The first bad setting as one line: its variable and what is wrong with it."""
    err = exc.errors()[0]
    name = "GROUNDCHAT_" + "_".join(str(part) for part in err["loc"]).upper()
    message = str(err["msg"]).removeprefix("Value error, ")
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{name}: {message}{more}"


def reset_settings_cache() -> None:
    """Tests change the environment; they call this to make the next read see it."""
    get_settings.cache_clear()
