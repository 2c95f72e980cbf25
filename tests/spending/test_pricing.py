"""The price table: entries, the operator's file, and the arithmetic of a charge."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from groundchat.money import cost_text, money_text
from groundchat.spending.prices import (
    BUILTIN_PRICES,
    RERANK_PRICES,
    UnknownModelPrice,
    rerank_price,
    ModelPrice,
    PricingError,
    UnknownModelPrice,
    charged_cost,
    price_for,
    price_table,
    search_cost,
    step_cost,
    worst_case_step_cost,
)
from groundchat.spending.token_estimate import estimate_tokens


def write(tmp_path, entries) -> object:
    path = tmp_path / "prices.json"
    path.write_text(entries if isinstance(entries, str) else json.dumps(entries))
    return path


def test_every_configured_model_string_in_the_table_is_priced_in_decimal():
    for model_id in ("bedrock:anthropic.claude-3-5-haiku-20241022-v1:0", "openai:gpt-4.1-mini", "offline"):
        price = price_for(model_id)
        assert isinstance(price.input_per_mtok, Decimal) and isinstance(price.output_per_mtok, Decimal)
    assert price_for("openai:gpt-4.1-mini").input_per_mtok == Decimal("0.40")
    assert price_for("offline").output_per_mtok == 0
    assert "scripted" not in BUILTIN_PRICES


def test_a_model_is_never_guessed_from_its_family_name():
    with pytest.raises(UnknownModelPrice) as err:
        price_for("openai:gpt-4.1-mini-2099")
    assert "groundchat.spending.prices.BUILTIN_PRICES" in str(err.value) and "GROUNDCHAT_PRICES_FILE" in str(err.value)


def test_the_prices_file_adds_models_and_overrides_single_fields(tmp_path):
    path = write(tmp_path, '{"openai:gpt-4.1-mini": {"trust_provider_cost": false},'
                           ' "openai:my-model": {"input_per_mtok": 0.1, "output_per_mtok": "0.3", "cache_read_per_mtok": "0.01"}}')
    table = price_table(path)
    assert table["openai:gpt-4.1-mini"].trust_provider_cost is False
    assert table["openai:gpt-4.1-mini"].output_per_mtok == Decimal("1.60")  # untouched fields stay
    mine = table["openai:my-model"]
    # A JSON number is read as a Decimal directly, never through a float.
    assert mine.input_per_mtok == Decimal("0.1") and str(mine.input_per_mtok) == "0.1"
    assert mine.cache_read == Decimal("0.01") and mine.cache_write == Decimal("0.1")


def test_the_prices_file_setting_is_read_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(write(tmp_path, {"scripted": {"input_per_mtok": "1", "output_per_mtok": "2"}})))
    from groundchat.config import get_settings, reset_settings_cache

    reset_settings_cache()
    assert price_for("scripted", get_settings()).output_per_mtok == 2
    with pytest.raises(UnknownModelPrice) as err:
        price_for("other", get_settings())
    assert str(get_settings().prices_file) in err.value.message


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"m": {"input_per_mtok": "1"}}', "output_per_mtok"),  # a new model needs both prices
        ('{"m": {"input_per_mtok": "1", "output_per_mtok": "-2"}}', "greater than or equal"),
        ('{"m": {"input_per_mtok": "1", "output_per_mtok": "2", "ouput_per_mtok": "2"}}', "ouput_per_mtok"),
        ("not json", "not valid JSON"),
        ('["m"]', "must be an object"),
    ],
)
def test_a_bad_prices_file_is_refused_with_the_reason(tmp_path, content, problem):
    with pytest.raises(PricingError) as err:
        price_table(write(tmp_path, content))
    assert problem in str(err.value)


def test_a_missing_prices_file_is_an_error_not_an_empty_file(tmp_path):
    with pytest.raises(PricingError, match="does not exist"):
        price_table(tmp_path / "nope.json")


def test_costs_are_exact_and_never_rounded_down():
    price = ModelPrice(input_per_mtok=Decimal("0.80"), output_per_mtok=Decimal("4.00"), cache_read_per_mtok=Decimal("0.08"), cache_write_per_mtok=Decimal("1.00"))
    assert step_cost(price, input_tokens=1234, output_tokens=567) == Decimal("0.0009872") + Decimal("0.002268")
    assert step_cost(price, input_tokens=0, output_tokens=0, cache_read_tokens=1000, cache_write_tokens=1000) == Decimal("0.00108")
    # The worst case prices every input token at the dearest input rate (a cache write here).
    assert worst_case_step_cost(price, input_tokens=1000, max_output_tokens=3000) == Decimal("0.001") + Decimal("0.012")
    third = ModelPrice(input_per_mtok=Decimal("1") / 3, output_per_mtok=Decimal(0))
    assert step_cost(third, input_tokens=1, output_tokens=0) == Decimal("0.000000333334")  # rounded up at 1e-12


def test_the_dearer_figure_counts_only_when_trusted():
    trusted = ModelPrice(input_per_mtok=Decimal(1), output_per_mtok=Decimal(1))
    untrusted = ModelPrice(input_per_mtok=Decimal(1), output_per_mtok=Decimal(1), trust_provider_cost=False)
    assert charged_cost(trusted, Decimal("0.001"), Decimal("0.002")) == Decimal("0.002")
    assert charged_cost(trusted, Decimal("0.003"), Decimal("0.002")) == Decimal("0.003")
    assert charged_cost(trusted, Decimal("0.003"), None) == Decimal("0.003")
    assert charged_cost(untrusted, Decimal("0.001"), Decimal("0.002")) == Decimal("0.001")


def test_a_search_is_its_embedding_plus_its_rerank_priced_per_model():
    amazon = rerank_price("bedrock:amazon.rerank-v1:0")
    assert amazon == Decimal("0.001") and rerank_price("bedrock:cohere.rerank-v3-5:0") == Decimal("0.002")
    assert rerank_price("none") == rerank_price("") == Decimal(0)
    assert search_cost(price_for("bedrock:amazon.titan-embed-text-v2:0"), 1000, rerank=amazon) == Decimal("0.00102")
    assert search_cost(price_for("local:minilm-int8"), 1000, rerank=amazon) == Decimal("0.001")
    assert search_cost(price_for("local:minilm-int8"), 1000) == Decimal(0)
    assert all(isinstance(v, Decimal) and v > 0 for v in RERANK_PRICES.values())


def test_a_rerank_model_without_a_price_is_refused_before_any_call():
    import pytest

    from groundchat.search.rerank import make_reranker

    with pytest.raises(UnknownModelPrice, match="bedrock:acme.rerank-x") as refused:
        rerank_price("bedrock:acme.rerank-x")
    assert "Nothing was called" in str(refused.value)
    with pytest.raises(UnknownModelPrice):
        make_reranker("bedrock:acme.rerank-x")


def test_the_token_estimate_counts_bytes_high():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2  # 4 bytes / 3, rounded up
    assert estimate_tokens("数据") == 2  # 6 bytes: one token per character, not one per three


def test_money_is_written_without_exponents_or_floats():
    assert money_text(Decimal("1E-7")) == "0.0000001"
    assert money_text(Decimal("0.500")) == "0.5"
    assert money_text(Decimal("100")) == "100"
    assert money_text(Decimal("-0")) == "0"


def test_cost_text_is_still_here_for_tool_results():
    assert cost_text(Decimal("0.01256")) == "$0.0126"
    assert cost_text(Decimal("0.0000001")) != "$0"
