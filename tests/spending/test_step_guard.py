"""The guard step by step: what each step is charged, and when a request is refused."""
from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal

import pytest

from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.token_estimate import estimate_request_tokens
from groundchat.spending.operator import budget_status, sweep_expired
from groundchat.spending.step_guard import SpendCapReached
from groundchat.spending.prices import UnknownModelPrice
from groundchat.store import budget_counters as bc
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat.models.messages import Message, ModelRequest, UsageEvent
from groundchat.spending.search_charge import SearchCharge

from .helpers import ask, counter, first_request, open_reservations, registry, usage_rows

# conftest prices every scripted model at $1 / $2 per million input / output tokens:
# 100 tokens in and 20 out cost $0.0001 + $0.00004.
OUR_PRICE = Decimal("0.00014")


def one_step(model_id: str = "scripted", **step) -> ScriptedModel:
    return ScriptedModel([Step(text="An answer.", input_tokens=100, output_tokens=20, **step)], model_id=model_id)


async def test_a_step_without_usage_is_charged_its_full_reservation_and_ends_the_request(dynamo, budget_settings):
    settings = budget_settings()
    model = ScriptedModel(
        [Step(tool_calls=[("lookup", {})], report_usage=False), Step(text="never reached")], model_id="scripted"
    )
    request = await first_request(registry(), "ann", "How do the contexts compare?", settings.max_output_tokens)
    worst_case = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted").step_worst_case(request)[0]

    result = await ask(dynamo, settings, model, caller="ann")

    assert result["done"] == "unmeasurable-cost"
    assert model.calls == 1  # the tool call it asked for is not run and no second step starts
    # The answer's after-answer checks still run on what was said (nothing was): citations, then done.
    assert [f.type for f in result["frames"]] == ["start", "step", "limit", "step", "citations", "done"]
    [row] = usage_rows(dynamo)
    assert row["measured"] is False
    assert row["charged"] == row["reserved"] == worst_case
    assert worst_case > Decimal("0.006")  # 3,000 output tokens at $2 per million, plus the input
    assert counter(dynamo, bc.CHAT_SCOPE).spent == worst_case
    assert counter(dynamo, bc.user_scope("ann")).spent == worst_case


async def test_a_failed_step_without_usage_is_charged_in_full(dynamo, budget_settings):
    settings = budget_settings()
    model = ScriptedModel([Step(raise_error=ConnectionError("upstream went away"), report_usage=False)], model_id="scripted")
    result = await ask(dynamo, settings, model, caller="ann")
    assert result["done"] == "error"
    [row] = usage_rows(dynamo)
    assert row["failed"] is True and row["measured"] is False
    assert row["charged"] == row["reserved"] > 0
    assert counter(dynamo, bc.CHAT_SCOPE).committed == row["charged"]


def _refused(status: int):
    import httpx

    request = httpx.Request("POST", "https://gateway.invalid/v1/chat/completions")
    return httpx.HTTPStatusError("refused", request=request, response=httpx.Response(status, request=request, text="no"))


@pytest.mark.parametrize("error", [
    pytest.param(lambda: __import__("httpx").ConnectError("connection refused"), id="gateway never reached"),
    pytest.param(lambda: _refused(401), id="key refused"),
    pytest.param(lambda: _refused(400), id="bad request"),
])
async def test_a_step_that_never_reached_the_provider_or_was_refused_before_generating_costs_nothing(
        dynamo, budget_settings, error):
    settings = budget_settings()
    model = ScriptedModel([Step(raise_error=error(), report_usage=False)], model_id="scripted")
    result = await ask(dynamo, settings, model, caller="ann")
    assert result["done"] == "error"
    [row] = usage_rows(dynamo)
    assert row["failed"] is True and row["charged"] == Decimal(0) and row["reserved"] > 0
    assert counter(dynamo, bc.CHAT_SCOPE).committed == Decimal(0)
    assert counter(dynamo, bc.user_scope("ann")).spent == Decimal(0)
    done = [f for f in result["frames"] if f.type == "done"][-1]
    assert Decimal(done.data["cost"]) == 0


async def test_a_step_cut_off_mid_generation_is_still_charged(dynamo, budget_settings):
    import httpx

    settings = budget_settings()
    model = ScriptedModel([Step(raise_error=httpx.ReadTimeout("no answer in time"), report_usage=False)],
                          model_id="scripted")
    await ask(dynamo, settings, model, caller="ann")
    [row] = usage_rows(dynamo)
    assert row["charged"] == row["reserved"] > 0


@pytest.mark.parametrize(
    ("provider_cost", "charged"),
    [(Decimal("0.0005"), Decimal("0.0005")), (Decimal("0.0001"), OUR_PRICE), (None, OUR_PRICE)],
)
async def test_the_dearer_of_our_price_and_the_providers_counts(dynamo, budget_settings, provider_cost, charged):
    settings = budget_settings()
    model = one_step("scripted-provider", provider_cost=provider_cost)
    result = await ask(dynamo, settings, model, caller="ann")
    assert result["done"] == "complete"
    [row] = usage_rows(dynamo)
    assert row["our_cost"] == OUR_PRICE
    assert row.get("provider_cost") == provider_cost
    assert row["charged"] == charged
    assert counter(dynamo, bc.CHAT_SCOPE).spent == charged


async def test_an_untrusted_providers_figure_is_recorded_but_ignored(dynamo, budget_settings):
    settings = budget_settings()
    model = one_step("scripted-untrusted", provider_cost=Decimal("0.0005"))
    await ask(dynamo, settings, model, caller="ann")
    [row] = usage_rows(dynamo)
    assert row["provider_cost"] == Decimal("0.0005")
    assert row["provider_cost_trusted"] is False
    assert row["charged"] == row["our_cost"] == OUR_PRICE
    assert counter(dynamo, bc.user_scope("ann")).spent == OUR_PRICE


async def test_a_model_missing_from_the_table_fails_before_any_call(dynamo, budget_settings):
    settings = budget_settings()
    model = one_step("unpriced-model")
    with pytest.raises(UnknownModelPrice) as err:
        BudgetGuard(dynamo, settings, "ann", "c", "r", model.price_id)
    result = await ask(dynamo, settings, model, caller="ann")
    assert (result["status"], result["code"]) == (503, "chat-not-configured")
    assert err.value.message in result["message"]
    assert model.calls == 0
    assert "groundchat.spending.prices.BUILTIN_PRICES" in err.value.message
    assert "GROUNDCHAT_PRICES_FILE" in err.value.message
    assert str(settings.prices_file) in err.value.message
    assert usage_rows(dynamo) == []
    assert counter(dynamo, bc.CHAT_SCOPE).committed == 0


async def test_an_expired_reservation_is_released_by_the_sweep(dynamo, budget_settings):
    settings = budget_settings()
    clock = [1_800_000_000.0]
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted", reservation_ttl_seconds=600, clock=lambda: clock[0])
    request = await first_request(registry(), "ann", "q", settings.max_output_tokens)
    held = await guard.reserve(request, 0)  # a request that crashes here never settles
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == held.amount

    assert await sweep_expired(dynamo, now=clock[0] + 599) == []  # not expired yet: still held
    assert counter(dynamo, bc.user_scope("ann")).reserved == held.amount

    [released] = await sweep_expired(dynamo, now=clock[0] + 601)
    assert released["reservation_id"] == held.id and Decimal(released["amount"]) == held.amount
    for scope in (bc.CHAT_SCOPE, bc.user_scope("ann")):
        c = counter(dynamo, scope)
        assert (c.spent, c.reserved, c.committed) == (0, 0, 0)
    assert open_reservations(dynamo) == []
    assert await sweep_expired(dynamo, now=clock[0] + 601) == []  # released once, never twice


async def test_a_step_that_settles_after_the_sweep_is_charged_without_a_second_release(dynamo, budget_settings):
    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted", reservation_ttl_seconds=1, clock=lambda: 1_800_000_000.0)
    held = await guard.reserve(await first_request(registry(), "ann", "q", 3000), 0)
    await sweep_expired(dynamo, now=1_800_000_100)
    charge = await guard.settle(held, UsageEvent(input_tokens=100, output_tokens=20))
    assert charge["charged"] == "0.00014" and charge["reservation_expired"] is True
    c = counter(dynamo, bc.CHAT_SCOPE)
    assert (c.spent, c.reserved, c.committed) == (OUR_PRICE, 0, OUR_PRICE)
    [row] = usage_rows(dynamo)
    assert row["reservation_expired"] is True


async def test_settling_twice_charges_once(dynamo, budget_settings):
    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    held = await guard.reserve(await first_request(registry(), "ann", "q", 3000), 0)
    usage = UsageEvent(input_tokens=100, output_tokens=20)
    first = await guard.settle(held, usage)
    again = await guard.settle(held, usage)  # a retry after a lost reply
    assert first["charged"] == again["charged"] == "0.00014"
    assert len(usage_rows(dynamo)) == 1
    c = counter(dynamo, bc.CHAT_SCOPE)
    assert (c.spent, c.reserved) == (OUR_PRICE, 0)


async def test_a_first_step_that_could_pass_a_cap_is_refused_before_any_call(dynamo, budget_settings):
    settings = budget_settings(chat="1", user="0.005")  # below one step's worst case
    model = one_step()
    result = await ask(dynamo, settings, model, caller="ann")
    assert result["status"] == 429
    assert result["scope"] == "user"
    assert result["message"].startswith("Your spending cap of $0.005 is reached")
    assert model.calls == 0
    assert usage_rows(dynamo) == [] and open_reservations(dynamo) == []


async def test_a_monthly_cap_says_when_it_resets(dynamo, budget_settings):
    settings = budget_settings(chat="0.005", user="0.5", period="month")
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted", clock=lambda: dt.datetime(2026, 12, 14, tzinfo=dt.timezone.utc).timestamp())
    with pytest.raises(SpendCapReached) as refused:
        await guard.precheck(await first_request(registry(), "ann", "q", 3000))
    assert refused.value.scope == "chat"
    assert refused.value.resets_at == "2027-01-01T00:00:00Z"
    assert "for this month" in refused.value.message and "It resets at 2027-01-01T00:00:00Z." in refused.value.message


async def test_monthly_counters_are_kept_per_month(dynamo, budget_settings):
    settings = budget_settings(period="month")
    november = dt.datetime(2026, 11, 30, 23, 59, tzinfo=dt.timezone.utc).timestamp()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted", clock=lambda: november)
    held = await guard.reserve(await first_request(registry(), "ann", "q", 3000), 0)
    await guard.settle(held, UsageEvent(input_tokens=100, output_tokens=20))
    assert counter(dynamo, bc.CHAT_SCOPE, "2026-11").spent == OUR_PRICE
    assert counter(dynamo, bc.CHAT_SCOPE, "2026-12").committed == 0


async def test_a_question_without_room_for_a_tool_step_and_the_answer_is_refused_before_any_call(dynamo, budget_settings):
    """Near a cap a question used to be paid for and stopped after its first step: now it starts
    only when the caps hold room for a tool step and the answering step together."""
    probe = await first_request(registry(), "ann", "How do the contexts compare?", 3000)
    guard = BudgetGuard(dynamo, budget_settings(), "ann", "c", "r", "scripted")
    first_worst, tokens = guard.step_worst_case(probe)
    answering_worst = guard.answering_worst_case(probe, tokens)[0]
    settings = budget_settings(chat="1", user=str(first_worst + answering_worst - Decimal("0.0001")))
    model = ScriptedModel([Step(tool_calls=[("lookup", {})]), Step(text="never reached")], model_id="scripted")
    result = await ask(dynamo, settings, model, caller="ann")
    assert (result["status"], result["code"], result["scope"]) == (429, "spend-cap", "user")
    assert model.calls == 0 and usage_rows(dynamo) == [] and open_reservations(dynamo) == []
    assert counter(dynamo, bc.user_scope("ann")).committed == 0

    enough = budget_settings(chat="1", user=str(first_worst + answering_worst + Decimal("0.0001")))
    model = ScriptedModel([Step(tool_calls=[("lookup", {})], output_tokens=2900), Step(text="Here it is.")], model_id="scripted")
    answered = await ask(dynamo, enough, model, caller="ann")
    assert answered["done"] == "complete" and model.calls == 2  # the tool step and the answer, never cut between
    assert open_reservations(dynamo) == [] and counter(dynamo, bc.user_scope("ann")).reserved == 0


async def test_a_step_beyond_the_held_room_that_could_pass_a_cap_ends_with_limit_and_spend_cap(dynamo, budget_settings):
    probe = await first_request(registry(), "ann", "How do the contexts compare?", 3000)
    guard = BudgetGuard(dynamo, budget_settings(), "ann", "c", "r", "scripted")
    first_worst, tokens = guard.step_worst_case(probe)
    answering_worst = guard.answering_worst_case(probe, tokens)[0]
    settings = budget_settings(chat="1", user=str(first_worst + answering_worst + Decimal("0.0001")))
    # Two tool steps: the third step has no room held for it, and what the first two spent leaves too little.
    model = ScriptedModel([Step(tool_calls=[("lookup", {})], input_tokens=100, output_tokens=2900),
                           Step(tool_calls=[("lookup", {})], input_tokens=100, output_tokens=2900),
                           Step(text="never reached")], model_id="scripted")
    result = await ask(dynamo, settings, model, caller="ann")
    assert result["done"] == "spend-cap"
    [limit] = [f for f in result["frames"] if f.type == "limit"]
    assert limit.data["scope"] == "user" and limit.data["resets_at"] is None
    assert model.calls == 2
    rows = usage_rows(dynamo)
    assert [r["charged"] for r in rows] == [Decimal("0.0059")] * 2
    mine = counter(dynamo, bc.user_scope("ann"))
    assert (mine.spent, mine.reserved) == (Decimal("0.0118"), 0)


async def test_the_precheck_holds_the_first_step_and_the_answering_step(dynamo, budget_settings):
    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    request = await first_request(registry(), "ann", "q", 3000)
    held = await guard.precheck(request)
    answering = guard.answering_worst_case(request, guard.step_worst_case(request)[1])[0]
    assert answering > held.amount
    assert await guard.reserve(request, 0) is held  # not held twice
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == held.amount + answering
    await guard.settle(held, UsageEvent(input_tokens=100, output_tokens=20))
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == answering  # kept for step 1
    second = await guard.reserve(request, 1)
    assert second.amount == answering and counter(dynamo, bc.CHAT_SCOPE).reserved == answering
    await guard.settle(second, UsageEvent(input_tokens=100, output_tokens=20))
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == 0 and open_reservations(dynamo) == []


async def test_an_unused_precheck_reservation_is_released(dynamo, budget_settings):
    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    await guard.precheck(await first_request(registry(), "ann", "q", 3000))
    await guard.release_unused()
    assert counter(dynamo, bc.CHAT_SCOPE).committed == 0 and open_reservations(dynamo) == []


RERANK_MODEL = "bedrock:amazon.rerank-v1:0"


async def test_a_search_is_charged_its_embedding_and_its_rerank_models_price(dynamo, budget_settings, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_EMBEDDING_MODEL", "bedrock:amazon.titan-embed-text-v2:0")
    monkeypatch.setenv("GROUNDCHAT_RERANK", RERANK_MODEL)
    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "run-s", "scripted")
    charge = await SearchCharge.of_run(guard)("x" * 300)  # 100 tokens by our estimate
    # 100 tokens at $0.02 per million, plus Amazon Rerank's $1.00 per 1,000 queries.
    assert charge["charged"] == "0.001002"
    unknown_length = await SearchCharge.of_run(guard)()  # charged as the largest embedding there can be
    assert unknown_length["charged"] == "0.00116384"
    rows = usage_rows(dynamo)
    assert {r["kind"] for r in rows} == {"search"}
    assert sum(r["charged"] for r in rows) == counter(dynamo, bc.CHAT_SCOPE).spent == Decimal("0.00216584")


async def test_a_search_with_an_unpriced_rerank_model_is_refused_and_nothing_charged(dynamo, budget_settings, monkeypatch):
    from groundchat.spending.prices import UnknownModelPrice

    monkeypatch.setenv("GROUNDCHAT_RERANK", "bedrock:acme.rerank-x")
    guard = BudgetGuard(dynamo, budget_settings(), "ann", "c", "run-s", "scripted")
    with pytest.raises(UnknownModelPrice):
        await SearchCharge.of_run(guard)("a question")
    assert usage_rows(dynamo) == [] and counter(dynamo, bc.CHAT_SCOPE).spent == 0


async def test_without_a_rerank_a_search_is_charged_its_embedding_alone(dynamo, budget_settings, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_EMBEDDING_MODEL", "bedrock:amazon.titan-embed-text-v2:0")
    settings = budget_settings()
    assert settings.rerank == "none"
    guard = BudgetGuard(dynamo, settings, "ann", "c", "run-s", "scripted")
    assert (await SearchCharge.of_run(guard)("x" * 300))["charged"] == "0.000002"  # 100 tokens at $0.02 per million
    monkeypatch.setenv("GROUNDCHAT_EMBEDDING_MODEL", "local:minilm-int8")  # the local default: nothing at all
    assert (await SearchCharge.of_run(BudgetGuard(dynamo, budget_settings(), "ann", "c", "run-u", "scripted"))("q"))["charged"] == "0"


async def test_a_search_past_the_cap_is_refused_and_not_charged(dynamo, budget_settings, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_RERANK", RERANK_MODEL)
    settings = budget_settings(chat="0.0015")
    guard = BudgetGuard(dynamo, settings, "ann", "c", "run-s", "scripted")
    await SearchCharge.of_run(guard)("a question")
    with pytest.raises(SpendCapReached) as refused:
        await SearchCharge.of_run(guard)("another question")
    assert refused.value.scope == "chat"
    assert counter(dynamo, bc.CHAT_SCOPE).spent == Decimal("0.001")
    assert len(usage_rows(dynamo)) == 1


async def test_a_step_charged_over_its_bound_is_counted_flagged_and_blocks_all_spending(dynamo, budget_settings, caplog):
    """The rule for a provider that reports more than a step could cost: charged as reported up to
    its reservation and the operator's bound (here within it), flagged on its usage row, and the
    chat's spending blocked until an operator looks."""
    from groundchat.spending.operator import unblock_budget

    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted-provider")
    held = await guard.reserve(await first_request(registry(), "ann", "q", 3000), 0)
    with caplog.at_level(logging.WARNING, logger="groundchat.spending"):
        charge = await guard.settle(held, UsageEvent(input_tokens=100, output_tokens=20, provider_cost=Decimal("0.05")))
    assert charge["charged"] == "0.05" and charge["over_bound"] is True and "disputed" not in charge
    assert "exceeded its bound" in caplog.text
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert chat.spent == Decimal("0.05") and chat.blocked
    [row] = usage_rows(dynamo)
    assert row["over_bound"] is True
    other = BudgetGuard(dynamo, settings, "bob", "c2", "r2", "scripted")
    with pytest.raises(SpendCapReached, match="Spending is stopped: a model step reported more usage than it could have cost"):
        await other.reserve(await first_request(registry(), "bob", "q", 3000), 0)
    with pytest.raises(SpendCapReached, match="Spending is stopped"):
        await SearchCharge.of_run(other)("x" * 300)
    status = await budget_status(dynamo, settings, "bob")
    assert status["chat"]["blocked"] == "a model step reported more usage than it could have cost"
    assert (await unblock_budget(dynamo, settings, actor="ops"))["unblocked"] is True
    assert await unblock_budget(dynamo, settings) is None  # not blocked any more
    again = await other.reserve(await first_request(registry(), "bob", "q", 3000), 0)
    assert again.amount > 0


async def test_budget_status_reports_both_caps_as_decimal_strings(dynamo, budget_settings):
    settings = budget_settings(chat="1", user="0.50")
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    request = await first_request(registry(), "ann", "q", 3000)
    done = await guard.reserve(request, 0)
    await guard.settle(done, UsageEvent(input_tokens=100, output_tokens=20))
    held = await guard.reserve(request, 1)
    status = await budget_status(dynamo, settings, "ann")
    assert status["chat"]["spent"] == "0.00014"
    assert status["chat"]["reserved"] == str(held.amount.normalize())
    assert Decimal(status["chat"]["remaining"]) == Decimal("1") - OUR_PRICE - held.amount
    assert status["chat"]["cap"] == "1" and status["you"]["cap"] == "0.5"
    assert Decimal(status["you"]["remaining"]) == Decimal("0.50") - OUR_PRICE - held.amount
    assert (await budget_status(dynamo, settings, "bob"))["you"] == {
        "spent": "0", "reserved": "0", "remaining": "0.5", "cap": "0.5", "period": "total", "resets_at": None,
    }


def test_the_input_estimate_counts_everything_sent():
    bare = ModelRequest(system="", messages=[], tools=[])
    asked = ModelRequest(system="", messages=[Message(role="user", content="é" * 300)], tools=[])
    # 300 two-byte characters are 600 bytes, so at least 200 more tokens, plus one message's framing.
    assert estimate_request_tokens(asked) - estimate_request_tokens(bare) >= 200 + 8
    with_tools = ModelRequest(system="", messages=[], tools=[t.spec() for t in registry()._tools.values()])
    assert estimate_request_tokens(with_tools) > estimate_request_tokens(bare)


class ConflictingClient:
    """Cancels the first `conflicts` transactions as real DynamoDB does when two meet on an item."""

    def __init__(self, conflicts: int, then: str | None = None) -> None:
        self.conflicts = conflicts
        self.then = then
        self.calls = 0

    def transact_write_items(self, TransactItems):
        from botocore.exceptions import ClientError

        self.calls += 1
        if self.calls <= self.conflicts or self.then:
            code = "TransactionConflict" if self.calls <= self.conflicts else self.then
            raise ClientError(
                {"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                 "CancellationReasons": [{"Code": code}, {"Code": "None"}]},
                "TransactWriteItems",
            )
        return {}


def test_transaction_conflicts_are_retried_and_condition_failures_are_not():
    from groundchat.store.transactions import TransactionBusy, TransactionRefused, transact_sync

    settles = ConflictingClient(conflicts=2)
    transact_sync(settles, [])
    assert settles.calls == 3

    refused = ConflictingClient(conflicts=0, then="ConditionalCheckFailed")
    with pytest.raises(TransactionRefused) as err:
        transact_sync(refused, [])
    assert refused.calls == 1 and err.value.failed(0) and not err.value.failed(1)

    with pytest.raises(TransactionBusy):
        transact_sync(ConflictingClient(conflicts=99), [], attempts=3)


async def test_a_reservation_that_keeps_conflicting_is_refused_not_waved_through(dynamo, budget_settings, monkeypatch):
    import groundchat.store.transactions as budget

    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    monkeypatch.setattr(budget, "MAX_TRANSACTION_ATTEMPTS", 2)
    monkeypatch.setattr(guard.dynamo, "client", ConflictingClient(conflicts=99))
    with pytest.raises(SpendCapReached, match="too busy"):
        await guard.reserve(await first_request(registry(), "ann", "q", 3000), 0)
