"""What prompt caching saves over a five-question conversation, priced with the price table.

The fixed part of every step is the system prompt and the tool schemas a caller with every
permission is offered (built by the same code the answer uses). Each question is two steps: one
that calls a data or docs tool and one that answers from its result; the conversation the model
sees grows by each question, tool call, tool result and answer.

Usage per step is the shape Bedrock's Converse reports it (`inputTokens` without the cached part,
`cacheWriteInputTokens` on the step that writes the cache, `cacheReadInputTokens` on the steps that
read it within its five-minute life), with token counts from the live tokenizer-free estimate the
budget uses (`spending.token_estimate`: one token per three bytes, counted high). Each step is
priced with `spending.prices.step_cost`, the function that settles real steps. The reservation is
shown too: it prices every input token at the dearest input rate (the cache-write price where it
is dearer), so caching lowers the charge, never the reservation.

Anthropic documents a minimum cacheable prefix (1,024 tokens for Claude 3.5 Sonnet, 2,048 for
Claude 3.5 Haiku); below it a cache point is ignored and the step is billed as plain input, which
is what this prints for a model whose minimum the fixed part does not reach.

    .venv/bin/python bench/prompt_cache.py
"""
from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from decimal import Decimal

from groundchat.money import cost_text
from groundchat.spending.prices import BUILTIN_PRICES, step_cost, worst_case_step_cost
from groundchat.spending.token_estimate import REQUEST_OVERHEAD_TOKENS, estimate_tokens

QUESTIONS = 5
STEPS_PER_QUESTION = 2
# What each turn adds to the conversation, in characters: measured from offline answers to the
# README's example questions (question, the tool call's arguments, a data tool's JSON, the answer).
QUESTION_CHARS, CALL_CHARS, RESULT_CHARS, ANSWER_CHARS, OUTPUT_TOKENS = 90, 120, 2_400, 900, 350
MAX_OUTPUT_TOKENS = 3_000

# Where Bedrock caches and the minimum prefix each model family documents (tokens).
CACHED_MODELS = {
    "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0": 2_048,
    "bedrock:amazon.nova-pro-v1:0": 1_000,
    "bedrock:amazon.nova-lite-v1:0": 1_000,
}


@dataclass
class Totals:
    plain: Decimal = Decimal(0)
    fixed_cached: Decimal = Decimal(0)
    turn_cached: Decimal = Decimal(0)
    reserved: Decimal = Decimal(0)


async def fixed_part() -> dict[str, str]:
    """The system prompt and every tool's schema, as sent on every step."""
    from groundchat.auth.callers import ALL_PERMISSIONS, Caller
    from groundchat.chat.prompts import system_prompt
    from groundchat.services import build_services

    async def everything(_permission: str, _caller: Caller) -> bool:
        return True

    services = build_services()
    registry = services.registry
    registry._can = everything  # the bench asks as a caller holding every permission
    tools = await registry.offered(Caller(id="bench"))
    assert {t.permission for t in tools} <= set(ALL_PERMISSIONS)
    prompt = system_prompt(services.settings.bot_name, [t.name for t in tools])
    schemas = json.dumps([t.spec().model_dump(mode="json") for t in tools], ensure_ascii=False)
    return {"system": prompt, "tools": schemas}


def conversation_tokens(question: int, step: int) -> int:
    """The messages the model sees at this step (0-based question, 0 = the tool step)."""
    earlier = question * (QUESTION_CHARS + CALL_CHARS + RESULT_CHARS + ANSWER_CHARS)
    now = QUESTION_CHARS + (CALL_CHARS + RESULT_CHARS if step else 0)
    return estimate_tokens("x" * (earlier + now))


def price_conversation(price_id: str, fixed_tokens: int, fixed_cached: int, minimum: int) -> Totals:
    """Three ways of billing the same ten steps: no cache point; cache points after the fixed
    part only (`fixed_cached` of its tokens are behind one, 0 when under the minimum); and a cache
    point after the latest turn as well, whose prefix is the whole request: each step reads what
    the step before wrote and writes only what is new, once the prefix reaches the minimum."""
    price = BUILTIN_PRICES[price_id]
    totals = Totals()
    previous_prefix = 0  # the prefix the last step wrote to the cache (0: nothing cached yet)
    for question in range(QUESTIONS):
        for step in range(STEPS_PER_QUESTION):
            whole = fixed_tokens + conversation_tokens(question, step)
            first = question == 0 and step == 0
            totals.plain += step_cost(price, input_tokens=whole, output_tokens=OUTPUT_TOKENS)
            totals.fixed_cached += step_cost(price, input_tokens=whole - fixed_cached, output_tokens=OUTPUT_TOKENS,
                                             cache_write_tokens=fixed_cached if first else 0,
                                             cache_read_tokens=0 if first else fixed_cached)
            read = previous_prefix
            # The minimum is checked at ~4 characters a token (a real count), not the budget's high count.
            written = whole - read if whole * 3 // 4 >= minimum else 0
            totals.turn_cached += step_cost(price, input_tokens=whole - read - written, output_tokens=OUTPUT_TOKENS,
                                            cache_read_tokens=read, cache_write_tokens=written)
            previous_prefix = whole if written else previous_prefix
            totals.reserved += worst_case_step_cost(price, input_tokens=whole, max_output_tokens=MAX_OUTPUT_TOKENS)
    return totals


def main() -> int:
    from groundchat.models.bedrock import cache_points

    parts = asyncio.run(fixed_part())
    chars = sum(len(text) for text in parts.values())
    tokens = estimate_tokens("".join(parts.values())) + REQUEST_OVERHEAD_TOKENS
    print(f"fixed part per step: {chars:,} characters (system prompt {len(parts['system']):,}, tool schemas "
          f"{len(parts['tools']):,}); {tokens:,} tokens as the budget counts it (high, with framing)")
    print(f"{QUESTIONS} questions × {STEPS_PER_QUESTION} steps; output {OUTPUT_TOKENS} tokens a step\n")
    print(f"{'model':<52}{'no cache':>10}{'fixed part':>12}{'saving':>8}{'+ turns':>10}{'saving':>8}{'reserved':>10}")
    for price_id, minimum in CACHED_MODELS.items():
        where = cache_points(price_id.split(":", 1)[1])
        behind = "".join(parts[name] for name in ("system", "tools") if name in where)
        high = estimate_tokens(behind) + (REQUEST_OVERHEAD_TOKENS if "tools" in where else 0)
        typical = len(behind) // 4 + (REQUEST_OVERHEAD_TOKENS if "tools" in where else 0)
        cached = high if typical >= minimum else 0  # a prefix under the minimum is billed as plain input
        totals = price_conversation(price_id, tokens, cached, minimum)
        fixed_saving = (totals.plain - totals.fixed_cached) / totals.plain * 100
        turn_saving = (totals.plain - totals.turn_cached) / totals.plain * 100
        note = "" if cached else f"  (fixed part behind a cache point ≈ {typical:,} tokens < the {minimum:,} minimum)"
        print(f"{price_id:<52}{cost_text(totals.plain):>10}{cost_text(totals.fixed_cached):>12}{fixed_saving:>7.1f}%"
              f"{cost_text(totals.turn_cached):>10}{turn_saving:>7.1f}%{cost_text(totals.reserved):>10}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
