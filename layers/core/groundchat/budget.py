"""Spending caps held in the database, however many requests run at once.

Before each model step the guard reserves that step's worst case against the chat's cap and the
caller's cap in one conditional DynamoDB transaction; after the step it settles the real cost in
one transaction that also releases the reservation and writes the usage row. A step can therefore
only start when its worst case fits under both caps beside everything already spent and held, and
the sum of what is charged can never pass a cap while each step costs at most its reservation
(the estimate below is built so that it does).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import random
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable

from botocore.exceptions import ClientError

from groundchat.guard import SpendCapReached
from groundchat.pricing import (
    EMBEDDING_MAX_INPUT_TOKENS,
    ModelPrice,
    charged_cost,
    cost_text,
    estimate_tokens,
    money_text,
    price_for,
    search_cost,
    step_cost,
    worst_case_step_cost,
)
from groundchat.store import budget_counters as bc
from groundchat.store import usage as us
from groundchat.transcript import ModelRequest, UsageEvent

log = logging.getLogger("groundchat.budget")

# What providers add around what we send: Anthropic's tool-use preamble is a few hundred tokens
# on the models we price, and each turn carries role markers and separators.
REQUEST_OVERHEAD_TOKENS = 500
PER_MESSAGE_OVERHEAD_TOKENS = 8
# Longer than any step can live (a Lambda stops at 15 minutes), so the sweep never releases the
# reservation of a step still running; only a crash leaves one behind to expire.
RESERVATION_TTL_SECONDS = 20 * 60
# Real DynamoDB cancels a transaction that meets another one on the same counter
# (TransactionConflict); those are retried with jittered backoff before giving up.
MAX_TRANSACTION_ATTEMPTS = 10
# A settle records money already spent, so it keeps trying far longer than a reservation, which
# can simply be refused.
SETTLE_ATTEMPTS = 40


class TransactionRefused(Exception):
    """A condition in the transaction failed; `codes[i]` is the reason for item i."""

    def __init__(self, reasons: list[dict[str, Any]]) -> None:
        self.reasons = reasons
        self.codes = [str(r.get("Code") or "None") for r in reasons]
        super().__init__(f"transaction refused: {self.codes}")

    def failed(self, index: int) -> bool:
        return index < len(self.codes) and self.codes[index] == "ConditionalCheckFailed"

    def old_item(self, index: int) -> dict[str, Any] | None:
        return self.reasons[index].get("Item") if index < len(self.reasons) else None


class TransactionBusy(Exception):
    """The transaction kept meeting others on the same items; nothing was written."""


def _transact_sync(client: Any, items: list[dict[str, Any]], attempts: int | None = None) -> None:
    attempts = attempts or MAX_TRANSACTION_ATTEMPTS
    for attempt in range(attempts):
        try:
            client.transact_write_items(TransactItems=items)
            return
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "TransactionCanceledException":
                reasons = exc.response.get("CancellationReasons") or []
                codes = {str(r.get("Code")) for r in reasons}
                if "ConditionalCheckFailed" in codes or not codes & {"TransactionConflict", "ThrottlingError"}:
                    raise TransactionRefused(reasons) from exc
            elif code not in ("TransactionConflictException", "ThrottlingException", "ProvisionedThroughputExceededException", "InternalServerError"):
                raise
        time.sleep(min(0.5, 0.01 * 2**attempt) * random.uniform(0.5, 1.0))
    raise TransactionBusy(f"transaction still conflicting after {attempts} attempts")


def estimate_request_tokens(request: ModelRequest) -> int:
    """Input tokens of a request, counted high: everything we send (system prompt, every message
    with its tool calls and results, the tool schemas) serialized as JSON, which is wordier than
    any provider's own encoding of the same content, at one token per three UTF-8 bytes (see
    `pricing.estimate_tokens`), plus the provider's own framing."""
    payload = json.dumps(
        {
            "system": request.system,
            "messages": [m.model_dump(mode="json", exclude_none=True) for m in request.messages],
            "tools": [t.model_dump(mode="json") for t in request.tools],
        },
        ensure_ascii=False,
        default=str,
    )
    return estimate_tokens(payload) + REQUEST_OVERHEAD_TOKENS + PER_MESSAGE_OVERHEAD_TOKENS * (len(request.messages) + 1)


@dataclass(frozen=True)
class Cap:
    scope: str  # counter scope: "chat" or "user#<id>"
    period: str  # "total" or "2026-11"
    limit: Decimal
    resets_at: str | None

    @property
    def public_scope(self) -> str:
        return "chat" if self.scope == bc.CHAT_SCOPE else "user"


@dataclass(frozen=True)
class Reservation:
    id: str
    kind: str
    step: int | None
    amount: Decimal
    counters: tuple[tuple[str, str], ...]
    created_at: str
    expires_at: int
    input_tokens_estimate: int = 0


def caps_for(settings: Any, caller_id: str, now: dt.datetime | None = None) -> list[Cap]:
    """The two caps a caller's spending counts against, in a fixed order (chat first, so two
    transactions never take the counters in opposite orders)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    period = bc.period_key(settings.budget_period, now)
    resets = bc.resets_at(settings.budget_period, now)
    return [
        Cap(bc.CHAT_SCOPE, period, Decimal(settings.budget_usd), resets),
        Cap(bc.user_scope(caller_id), period, Decimal(settings.user_budget_usd), resets),
    ]


def refusal(cap: Cap, amount: Decimal, counter: bc.Counter | None) -> SpendCapReached:
    committed = counter.committed if counter else Decimal(0)
    left = max(Decimal(0), cap.limit - committed)
    whose = "The chat's spending cap" if cap.scope == bc.CHAT_SCOPE else "Your spending cap"
    period = " for this month" if cap.resets_at else ""
    when = f" It resets at {cap.resets_at}." if cap.resets_at else ""
    message = (
        f"{whose} of {cost_text(cap.limit)}{period} is reached: the next step could cost up to "
        f"{cost_text(amount)} and {cost_text(left)} is left.{when}"
    )
    return SpendCapReached(cap.public_scope, message, cap.resets_at)


class BudgetGuard:
    """The StepGuard for one request (one caller, conversation and run) on a priced model."""

    def __init__(
        self,
        dynamo: Any,
        settings: Any,
        caller_id: str,
        conversation_id: str,
        run_id: str,
        model_id: str,
        *,
        reservation_ttl_seconds: int = RESERVATION_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # Raises UnknownModelPrice here, before anything could be called or spent.
        self.price: ModelPrice = price_for(model_id, settings)
        self.dynamo = dynamo
        self.settings = settings
        self.caller_id = caller_id
        self.conversation_id = conversation_id
        self.run_id = run_id
        self.model_id = model_id
        self.reservation_ttl_seconds = reservation_ttl_seconds
        self.clock = clock
        self._held: Reservation | None = None

    # --- what a step may cost ----------------------------------------------------------------

    def step_worst_case(self, request: ModelRequest) -> tuple[Decimal, int]:
        tokens = estimate_request_tokens(request)
        return worst_case_step_cost(self.price, input_tokens=tokens, max_output_tokens=request.max_output_tokens), tokens

    def _now(self) -> tuple[dt.datetime, str]:
        now = dt.datetime.fromtimestamp(self.clock(), dt.timezone.utc)
        return now, now.isoformat(timespec="microseconds").replace("+00:00", "Z")

    # --- the StepGuard protocol --------------------------------------------------------------

    async def precheck(self, request: ModelRequest) -> Reservation:
        """The 429 check: reserve the first step now and keep the reservation for step 0, so a
        request that passes this check cannot be refused at its first step by a race."""
        await self.release_unused()
        amount, tokens = self.step_worst_case(request)
        self._held = await self._hold(amount, kind=us.KIND_MODEL_STEP, step=0, tokens=tokens)
        return self._held

    async def reserve(self, request: ModelRequest, step: int) -> Reservation:
        amount, tokens = self.step_worst_case(request)
        held, self._held = self._held, None
        if held is not None:
            if step == 0 and held.amount >= amount:
                return held
            # The request grew since the precheck: hold what it needs now instead.
            await self.release(held)
        return await self._hold(amount, kind=us.KIND_MODEL_STEP, step=step, tokens=tokens)

    async def settle(self, reservation: Reservation | None, usage: UsageEvent | None, *, failed: bool = False) -> dict[str, Any]:
        if reservation is None:
            return {"charged": "0"}
        if usage is None:
            # Nothing says what the step cost, so it is charged everything it could have cost.
            ours, provider, charged = reservation.amount, None, reservation.amount
        else:
            ours = step_cost(
                self.price,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            )
            provider = usage.provider_cost
            charged = charged_cost(self.price, ours, provider)
        if charged > reservation.amount:
            # Recorded all the same (a cost is never counted low); it means the estimate missed.
            log.warning(
                "step cost %s exceeded its reservation %s (run %s, model %s)",
                money_text(charged), money_text(reservation.amount), self.run_id, self.model_id,
            )
        row_args = dict(
            run_id=self.run_id,
            entry=us.entry_key(reservation.created_at, reservation.id),
            created_at=reservation.created_at,
            conversation_id=self.conversation_id,
            caller=self.caller_id,
            model=self.model_id,
            kind=reservation.kind,
            charged=charged,
            our_cost=ours,
            reserved=reservation.amount,
            provider_cost=provider,
            provider_cost_trusted=self.price.trust_provider_cost,
            measured=usage is not None,
            counters=list(reservation.counters),
            step=reservation.step,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
            cache_read_tokens=usage.cache_read_tokens if usage else None,
            cache_write_tokens=usage.cache_write_tokens if usage else None,
            failed=failed,
        )
        budget, usage_table = self.dynamo.name(bc.BUDGET), self.dynamo.name(us.USAGE)
        items = [
            bc.close_reservation_op(budget, reservation.id),
            *(bc.settle_op(budget, scope, period, charged, reservation.amount) for scope, period in reservation.counters),
            us.put_usage_op(usage_table, us.usage_item(**row_args)),
        ]
        expired = False
        try:
            await self.dynamo.run(_transact_sync, self.dynamo.client, items, SETTLE_ATTEMPTS)
        except TransactionRefused as refused:
            if refused.failed(len(items) - 1):
                # The row exists: an earlier attempt of this very settle went through.
                return await self._already_settled(row_args["entry"], reservation)
            if not refused.failed(0):
                raise
            # The sweep released the reservation first (the step outlived its expiry): the money
            # was still spent, so it is charged without releasing anything a second time.
            expired = True
            log.warning("reservation %s was swept before its step settled (run %s)", reservation.id, self.run_id)
            late = [
                *(bc.settle_op(budget, scope, period, charged, Decimal(0)) for scope, period in reservation.counters),
                us.put_usage_op(usage_table, us.usage_item(**row_args, reservation_expired=True)),
            ]
            try:
                await self.dynamo.run(_transact_sync, self.dynamo.client, late, SETTLE_ATTEMPTS)
            except TransactionRefused as again:
                if again.failed(len(late) - 1):
                    return await self._already_settled(row_args["entry"], reservation)
                raise
        return {
            "charged": money_text(charged),
            "our_cost": money_text(ours),
            "provider_cost": money_text(provider) if provider is not None else None,
            "reserved": money_text(reservation.amount),
            "measured": usage is not None,
            "reservation_id": reservation.id,
            **({"reservation_expired": True} if expired else {}),
        }

    # --- searches ----------------------------------------------------------------------------

    async def charge_search(self, query: str | None = None, *, embedding_tokens: int | None = None) -> dict[str, Any]:
        """Charge one search (its embedding plus the flat rerank) before it runs.

        A search's cost is known before it runs (the query is at most one embedding request), so
        the reservation and the charge are the same conditional transaction: both caps are
        checked and the amount goes straight to `spent`, with the usage row. Without the query
        the embedding is charged at its largest possible size.
        """
        embedding_model = getattr(self.settings, "embedding_model", "local:minilm-int8")
        embedding_price = price_for(embedding_model, self.settings)
        if embedding_tokens is None:
            embedding_tokens = estimate_tokens(query) if query else EMBEDDING_MAX_INPUT_TOKENS
        amount = search_cost(embedding_price, embedding_tokens)
        now, created_at = self._now()
        caps = caps_for(self.settings, self.caller_id, now)
        self._refuse_oversized(caps, amount)
        charge_id = uuid.uuid4().hex
        row = us.usage_item(
            run_id=self.run_id,
            entry=us.entry_key(created_at, charge_id),
            created_at=created_at,
            conversation_id=self.conversation_id,
            caller=self.caller_id,
            model=embedding_model,
            kind=us.KIND_SEARCH,
            charged=amount,
            our_cost=amount,
            reserved=amount,
            provider_cost=None,
            provider_cost_trusted=embedding_price.trust_provider_cost,
            measured=True,
            counters=[(c.scope, c.period) for c in caps],
            input_tokens=embedding_tokens,
        )
        budget = self.dynamo.name(bc.BUDGET)
        items = [
            *(bc.charge_within_cap_op(budget, c.scope, c.period, amount, c.limit) for c in caps),
            us.put_usage_op(self.dynamo.name(us.USAGE), row),
        ]
        await self._transact_or_refuse(items, caps, amount)
        return {"charged": money_text(amount), "embedding_tokens": embedding_tokens, "charge_id": charge_id}

    # --- reservations ------------------------------------------------------------------------

    async def release(self, reservation: Reservation) -> bool:
        """Give a reservation back unused. False if it was already settled or swept."""
        budget = self.dynamo.name(bc.BUDGET)
        items = [
            bc.close_reservation_op(budget, reservation.id),
            *(bc.release_op(budget, scope, period, reservation.amount) for scope, period in reservation.counters),
        ]
        try:
            await self.dynamo.run(_transact_sync, self.dynamo.client, items)
        except TransactionRefused as refused:
            if refused.failed(0):
                return False
            raise
        return True

    async def release_unused(self) -> None:
        """Release a precheck reservation that no step used (the request ended before step 0)."""
        held, self._held = self._held, None
        if held is not None:
            await self.release(held)

    async def _hold(self, amount: Decimal, *, kind: str, step: int | None, tokens: int) -> Reservation:
        now, created_at = self._now()
        caps = caps_for(self.settings, self.caller_id, now)
        self._refuse_oversized(caps, amount)
        reservation = Reservation(
            id=uuid.uuid4().hex,
            kind=kind,
            step=step,
            amount=amount,
            counters=tuple((c.scope, c.period) for c in caps),
            created_at=created_at,
            expires_at=int(self.clock()) + self.reservation_ttl_seconds,
            input_tokens_estimate=tokens,
        )
        budget = self.dynamo.name(bc.BUDGET)
        item = bc.reservation_item(
            reservation.id,
            amount=amount,
            counters=list(reservation.counters),
            expires_at=reservation.expires_at,
            created_at=created_at,
            caller=self.caller_id,
            run_id=self.run_id,
            conversation_id=self.conversation_id,
            model=self.model_id,
            kind=kind,
            step=step,
        )
        items = [*(bc.hold_op(budget, c.scope, c.period, amount, c.limit) for c in caps), bc.put_reservation_op(budget, item)]
        await self._transact_or_refuse(items, caps, amount)
        return reservation

    def _refuse_oversized(self, caps: list[Cap], amount: Decimal) -> None:
        # The counter condition cannot express a negative bound for a counter not yet written,
        # so an amount no cap could ever hold is refused here, before any write.
        for cap in caps:
            if amount > cap.limit:
                raise refusal(cap, amount, None)

    async def _transact_or_refuse(self, items: list[dict[str, Any]], caps: list[Cap], amount: Decimal) -> None:
        try:
            await self.dynamo.run(_transact_sync, self.dynamo.client, items)
        except TransactionRefused as refused:
            for index, cap in enumerate(caps):
                if refused.failed(index):
                    old = refused.old_item(index)
                    raise refusal(cap, amount, bc.Counter.from_item(cap.scope, cap.period, old) if old else None) from None
            raise
        except TransactionBusy:
            # Refusing is the safe side: nothing was held or charged.
            raise SpendCapReached(caps[0].public_scope, "The budget is too busy to reserve this step; nothing was spent. Try again.") from None

    async def _already_settled(self, entry: str, reservation: Reservation) -> dict[str, Any]:
        row = await self.dynamo.run(us.get_usage_row_sync, self.dynamo.client, self.dynamo.name(us.USAGE), self.run_id, entry) or {}
        return {"charged": money_text(Decimal(row.get("charged", reservation.amount))), "reservation_id": reservation.id}


# --- operator and endpoint helpers ------------------------------------------------------------


async def sweep_expired(dynamo: Any, now: float | None = None) -> list[dict[str, Any]]:
    """Release every reservation whose expiry has passed; returns what was released.

    Each release deletes the reservation on the condition that it still exists and has expired,
    in the same transaction that gives its amount back, so a settle racing the sweep wins or
    loses whole: the amount is released exactly once.
    """
    now_s = int(time.time() if now is None else now)
    budget = dynamo.name(bc.BUDGET)
    released: list[dict[str, Any]] = []
    for item in await dynamo.run(bc.expired_reservations_sync, dynamo.client, budget, now_s):
        values = bc.plain(item)
        reservation_id = str(values["scope"]).split("#", 1)[1]
        amount = Decimal(values["amount"])
        counters = bc.reservation_counters(item)
        items = [
            bc.close_reservation_op(budget, reservation_id, expired_before=now_s),
            *(bc.release_op(budget, scope, period, amount) for scope, period in counters),
        ]
        try:
            await dynamo.run(_transact_sync, dynamo.client, items)
        except TransactionRefused:
            continue  # settled (or swept) meanwhile: nothing to give back
        record = {
            "reservation_id": reservation_id,
            "amount": money_text(amount),
            "run_id": values.get("run_id"),
            "caller": values.get("caller"),
            "expired_at": int(values["expires_at"]),
        }
        log.warning("released expired reservation %s", json.dumps(record))
        released.append(record)
    return released


def _status(cap: Cap, counter: bc.Counter) -> dict[str, Any]:
    return {
        "spent": money_text(counter.spent),
        "reserved": money_text(counter.reserved),
        "remaining": money_text(max(Decimal(0), cap.limit - counter.committed)),
        "cap": money_text(cap.limit),
        "period": cap.period,
        "resets_at": cap.resets_at,
    }


async def budget_status(dynamo: Any, settings: Any, caller_id: str) -> dict[str, Any]:
    """What is spent, held and left, for the chat and for this caller (decimal strings)."""
    chat, user = caps_for(settings, caller_id)
    budget = dynamo.name(bc.BUDGET)
    chat_counter = await dynamo.run(bc.read_counter_sync, dynamo.client, budget, chat.scope, chat.period)
    user_counter = await dynamo.run(bc.read_counter_sync, dynamo.client, budget, user.scope, user.period)
    return {"chat": _status(chat, chat_counter), "you": _status(user, user_counter)}


def parse_scope(text: str) -> str:
    """"chat" or "user:<id>" (the CLI's spelling) to a counter scope."""
    if text == "chat":
        return bc.CHAT_SCOPE
    if text.startswith("user:") and len(text) > len("user:"):
        return bc.user_scope(text[len("user:"):])
    raise ValueError(f"scope must be 'chat' or 'user:<id>', not {text!r}")


def _reset_sync(client: Any, table: str, scope: str, period: str, actor: str, attempts: int = MAX_TRANSACTION_ATTEMPTS) -> dict[str, Any] | None:
    for _ in range(attempts):
        got = client.get_item(TableName=table, Key=bc.key(scope, period), ConsistentRead=True)
        if "Item" not in got:
            return None
        counter = bc.Counter.from_item(scope, period, got["Item"])
        at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        record = {
            "scope": scope,
            "period": period,
            "spent_reset": money_text(counter.spent),
            "reserved_kept": money_text(counter.reserved),
            "actor": actor,
            "at": at,
        }
        items = [
            {
                "Update": {
                    "TableName": table,
                    "Key": bc.key(scope, period),
                    # Only if the counter is as read: the log then says exactly what was reset.
                    # Reservations in flight stay held; their steps settle against the new zero.
                    "ConditionExpression": "spent = :old AND reserved = :reserved",
                    "UpdateExpression": "SET spent = :zero, committed = :reserved",
                    "ExpressionAttributeValues": {":old": bc.n(counter.spent), ":zero": bc.n(0), ":reserved": bc.n(counter.reserved)},
                }
            },
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        **bc.key(bc.RESET_LOG_SCOPE, f"{at}#{uuid.uuid4().hex}"),
                        "counter_scope": {"S": scope},
                        "counter_period": {"S": period},
                        "spent_reset": bc.n(counter.spent),
                        "reserved_kept": bc.n(counter.reserved),
                        "actor": {"S": actor},
                        "at": {"S": at},
                    },
                    "ConditionExpression": "attribute_not_exists(#s)",
                    "ExpressionAttributeNames": {"#s": "scope"},
                }
            },
        ]
        try:
            _transact_sync(client, items)
            return record
        except TransactionRefused:
            continue  # a step settled or a reservation moved meanwhile: read again
    raise TransactionBusy(f"could not reset {scope} {period}: the counter kept changing")


async def reset_budget(dynamo: Any, settings: Any, scope_text: str, *, period: str | None = None, actor: str = "operator") -> dict[str, Any] | None:
    """Set a counter's `spent` back to zero (reservations in flight stay held), and record the
    reset in the budget table's reset log. Usage rows are kept: they are the record of money
    spent. Returns what was reset, or None if the counter has never been written."""
    scope = parse_scope(scope_text)
    period = period or bc.period_key(settings.budget_period)
    record = await dynamo.run(_reset_sync, dynamo.client, dynamo.name(bc.BUDGET), scope, period, actor)
    if record is not None:
        log.warning("budget reset %s", json.dumps(record))
    return record
