"""What each model step and each search costs: the price table and the arithmetic of charges
(money as text is groundchat/money.py)."""
from __future__ import annotations

import json
from decimal import ROUND_CEILING, Context, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

if TYPE_CHECKING:
    from groundchat.config import Settings

# --- The price table -------------------------------------------------------------------------
#
# Prices are per million tokens, in US dollars, keyed by the configured model string exactly as
# GROUNDCHAT_MODEL (or GROUNDCHAT_EMBEDDING_MODEL) spells it. A model is entered deliberately: no
# entry is ever inferred from a family name, because a wrong guess would count spending low.

PRICES_FILE_SETTING = "GROUNDCHAT_PRICES_FILE"
TABLE_NAME = "groundchat.spending.prices.BUILTIN_PRICES"
PER_MTOK = Decimal(1_000_000)
# Costs are kept to a trillionth of a dollar and rounded up there, so sums stay exact and small.
MONEY_QUANTUM = Decimal("1e-12")
# Bedrock's rerank models bill per query, in USD: one query reranks up to 100 passages, and a search
# sends one with at most three times its excerpts. Keyed as GROUNDCHAT_RERANK spells the model; a
# rerank model without an entry is refused before any call, as answering models are.
RERANK_PRICES: dict[str, Decimal] = {
    "bedrock:amazon.rerank-v1:0": Decimal("0.001"),  # $1.00 per 1,000 queries
    "bedrock:cohere.rerank-v3-5:0": Decimal("0.002"),  # $2.00 per 1,000 queries
}
# The most tokens one embedding request can hold (Titan Text Embeddings v2): the worst case of a
# search whose query length is not known when it is reserved.
EMBEDDING_MAX_INPUT_TOKENS = 8192


class PricingError(ValueError):
    """The price table or the prices file is unusable."""


class UnknownModelPrice(PricingError, LookupError):
    """A model with no entry in the price table: refused before any paid call."""

    def __init__(self, model_id: str, prices_file: Path | None) -> None:
        where = f"{TABLE_NAME}" + (f" and the prices file {prices_file}" if prices_file else "")
        example = json.dumps({model_id: {"input_per_mtok": "0.40", "output_per_mtok": "1.60", "trust_provider_cost": False}})
        message = (
            f"No price for model {model_id!r} in the price table ({where}). Nothing was called. "
            f"Add it to a JSON file named by {PRICES_FILE_SETTING}, keyed by the configured model string, "
            f"e.g. {example}"
        )
        super().__init__(message)
        self.model_id = model_id
        self.message = message


class ModelPrice(BaseModel):
    """What one model charges per million tokens, and whether its own cost figure counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_mtok: Decimal = Field(ge=0)
    output_per_mtok: Decimal = Field(ge=0)
    # Bedrock caches where we place cache points (models/bedrock.py), OpenAI-compatible providers
    # cache a byte-stable prefix on their own; a model without cache prices here is billed its
    # input price for cached tokens, never less.
    cache_read_per_mtok: Decimal | None = Field(default=None, ge=0)
    cache_write_per_mtok: Decimal | None = Field(default=None, ge=0)
    # True: the provider's figure counts when it is dearer than ours. False: ignored (a gateway
    # whose figure is known to be wrong, or in another currency).
    trust_provider_cost: bool = True

    @property
    def cache_read(self) -> Decimal:
        return self.input_per_mtok if self.cache_read_per_mtok is None else self.cache_read_per_mtok

    @property
    def cache_write(self) -> Decimal:
        return self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok

    @property
    def dearest_input(self) -> Decimal:
        """The price of an input token in the worst case (whichever way the provider bills it)."""
        return max(self.input_per_mtok, self.cache_read, self.cache_write)


def _p(input_: str, output: str, cache_read: str | None = None, cache_write: str | None = None, trust: bool = True) -> ModelPrice:
    return ModelPrice(
        input_per_mtok=Decimal(input_),
        output_per_mtok=Decimal(output),
        cache_read_per_mtok=Decimal(cache_read) if cache_read is not None else None,
        cache_write_per_mtok=Decimal(cache_write) if cache_write is not None else None,
        trust_provider_cost=trust,
    )


# List prices (on-demand, USD per million tokens) as published by each provider.
BUILTIN_PRICES: dict[str, ModelPrice] = {
    # The offline answerer calls no provider.
    "offline": _p("0", "0", trust=False),
    # Bedrock (on-demand; the cache prices are Anthropic's prompt-caching rates on Bedrock).
    "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0": _p("0.80", "4.00", "0.08", "1.00"),
    "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0": _p("3.00", "15.00", "0.30", "3.75"),
    "bedrock:anthropic.claude-3-haiku-20240307-v1:0": _p("0.25", "1.25"),
    "bedrock:amazon.nova-micro-v1:0": _p("0.035", "0.14", "0.00875"),
    "bedrock:amazon.nova-lite-v1:0": _p("0.06", "0.24", "0.015"),
    "bedrock:amazon.nova-pro-v1:0": _p("0.80", "3.20", "0.20"),
    # OpenAI (or a gateway in front of it, whose own figure counts when dearer).
    "openai:gpt-4.1-mini": _p("0.40", "1.60", "0.10"),
    "openai:gpt-4.1": _p("2.00", "8.00", "0.50"),
    "openai:gpt-4.1-nano": _p("0.10", "0.40", "0.025"),
    "openai:gpt-4o-mini": _p("0.15", "0.60", "0.075"),
    # Embeddings for the docs search (output is not billed).
    "local:minilm-int8": _p("0", "0", trust=False),
    "local:bge-small-en-v1.5-q": _p("0", "0", trust=False),
    "local:e5-small-v2-q": _p("0", "0", trust=False),
    "bedrock:amazon.titan-embed-text-v2:0": _p("0.02", "0"),
}


def _load_prices_file(path: Path) -> dict[str, dict[str, object]]:  # numbers as Decimal
    try:
        # parse_float=Decimal: a price written as a JSON number never passes through a float.
        raw = json.loads(Path(path).read_text(encoding="utf-8"), parse_float=Decimal)
    except FileNotFoundError as exc:
        raise PricingError(f"{PRICES_FILE_SETTING} names {path}, which does not exist") from exc
    except json.JSONDecodeError as exc:
        raise PricingError(f"{PRICES_FILE_SETTING} ({path}) is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise PricingError(f"{PRICES_FILE_SETTING} ({path}) must be an object of model string -> price object")
    return raw


def price_table(prices_file: Path | None = None) -> dict[str, ModelPrice]:
    """The built-in table with the operator's file applied: an entry for a known model may change
    single fields (e.g. only `trust_provider_cost`); a new model must give input and output."""
    table = dict(BUILTIN_PRICES)
    if prices_file is None:
        return table
    for model_id, fields in _load_prices_file(prices_file).items():
        base = table[model_id].model_dump(exclude_none=True) if model_id in table else {}
        try:
            table[model_id] = ModelPrice.model_validate({**base, **fields})
        except ValidationError as exc:
            raise PricingError(f"{PRICES_FILE_SETTING} ({prices_file}): entry {model_id!r} is invalid: {exc}") from exc
    return table


def price_for(model_id: str, settings: Settings | None = None, *, prices_file: Path | None = None) -> ModelPrice:
    """The price of a configured model string; UnknownModelPrice if it has none."""
    if settings is not None and prices_file is None:
        prices_file = getattr(settings, "prices_file", None)
    price = price_table(prices_file).get(model_id)
    if price is None:
        raise UnknownModelPrice(model_id, prices_file)
    return price


def ceil_money(amount: Decimal) -> Decimal:
    """Rounded up to MONEY_QUANTUM: a cost is never stored lower than it was."""
    return Decimal(amount).quantize(MONEY_QUANTUM, rounding=ROUND_CEILING, context=Context(prec=60))


def tokens_cost(tokens: int, per_mtok: Decimal) -> Decimal:
    return ceil_money(Decimal(max(0, int(tokens))) * per_mtok / PER_MTOK)


def step_cost(price: ModelPrice, *, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0) -> Decimal:
    """Our price for what a step reported."""
    return ceil_money(
        tokens_cost(input_tokens, price.input_per_mtok)
        + tokens_cost(output_tokens, price.output_per_mtok)
        + tokens_cost(cache_read_tokens, price.cache_read)
        + tokens_cost(cache_write_tokens, price.cache_write)
    )


def worst_case_step_cost(price: ModelPrice, *, input_tokens: int, max_output_tokens: int) -> Decimal:
    """The most a step can cost: every input token at the dearest input rate, and every output
    token the request allows."""
    return ceil_money(tokens_cost(input_tokens, price.dearest_input) + tokens_cost(max_output_tokens, price.output_per_mtok))


def charged_cost(price: ModelPrice, ours: Decimal, provider: Decimal | None) -> Decimal:
    """The dearer of our price and the provider's own figure, unless the table distrusts it."""
    if provider is None or not price.trust_provider_cost:
        return ceil_money(ours)
    return ceil_money(max(Decimal(ours), Decimal(provider)))


def rerank_price(spec: str, settings: Settings | None = None) -> Decimal:
    """What one search's rerank costs under GROUNDCHAT_RERANK: nothing for `none`; the model's price
    per query otherwise; UnknownModelPrice when the model has none."""
    spec = (spec or "none").strip()
    if spec.lower() == "none":
        return Decimal(0)
    if spec not in RERANK_PRICES:
        raise UnknownModelPrice(spec, getattr(settings, "prices_file", None) if settings is not None else None)
    return RERANK_PRICES[spec]


def search_cost(embedding_price: ModelPrice, embedding_tokens: int, *, rerank: Decimal = Decimal(0)) -> Decimal:
    """A search: its embedding at the embedding model's price, plus its rerank's (`rerank_price`)."""
    return ceil_money(tokens_cost(embedding_tokens, embedding_price.input_per_mtok) + rerank)
