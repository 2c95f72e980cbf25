"""Spending caps held in the database, however many requests run at once.

Before each model step the guard reserves that step's worst case against the chat's cap and the
caller's cap in one conditional DynamoDB transaction (the chat's on one shard of its pool,
spending/pooled_hold.py); after the step it settles the real cost in one transaction that also
releases the reservation and writes the usage row, or, when the budget stays too busy for it,
records that transaction for the sweep (spending/settlement.py): what was spent is always counted. A step can therefore
only start when its worst case fits under both caps beside everything already spent and held, and
the sum of what is charged can never pass a cap while each step costs at most its reservation
(the token estimate is built so that it does). A provider that reports more is charged by the
rules of spending/overrun.py: at most one bound past the caps, however many steps at once.
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from groundchat import telemetry
from groundchat.models.messages import ModelRequest, UsageEvent
from groundchat.telemetry import attributes as attr
from groundchat.spending.caps import caps_for, refuse_oversized, timestamp
from groundchat.spending.over_bound import settle_over_bound
from groundchat.spending.pooled_hold import hold_within_caps
from groundchat.spending.settlement import ALREADY, LATE, PENDING, Settlement, settle_sync
from groundchat.money import money_text
from groundchat.spending.prices import ModelPrice, charged_cost, price_for, step_cost, worst_case_step_cost
from groundchat.spending.token_estimate import estimate_request_tokens
from groundchat.store import budget_counters as bc
from groundchat.store.leases import LEASE_SECONDS
from groundchat.store.tables import BUDGET, USAGE
from groundchat.store import usage as us
from groundchat.store.transactions import TransactionBusy, TransactionRefused, transact_sync
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import TransactAction

log = logging.getLogger("groundchat.spending")

# A lease the answer's heartbeat renews (store/leases.py): the sweep releases it about a minute
# after its process died, never while the step runs (and a step settled after a release is still
# charged, below).
RESERVATION_TTL_SECONDS = LEASE_SECONDS
# A settle records money already spent, so it keeps trying far longer than a reservation, which
# can simply be refused; past these it is recorded for the sweep (spending/settlement.py).
SETTLE_ATTEMPTS = 40
# What a reader refused by the block is told (the operator's log has the figures).
OVER_BOUND_BLOCK = "a model step reported more usage than it could have cost"


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


class BudgetGuard:
    """The StepGuard for one request (one caller, conversation and run) on a priced model."""

    requires_usage = True

    def __init__(
        self,
        dynamo: Dynamo,
        settings: Settings,
        caller_id: str,
        conversation_id: str,
        run_id: str,
        model_id: str,
        *,
        reservation_ttl_seconds: int = RESERVATION_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        public: bool = False,
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
        self.public = public  # an anonymous visitor: the visitors' ceiling counts too
        self._held: dict[int, Reservation] = {}  # the precheck's, by the step they are kept for
        self._open: dict[str, Reservation] = {}  # every reservation held and not yet settled or released

    # --- what a step may cost ----------------------------------------------------------------

    def step_worst_case(self, request: ModelRequest) -> tuple[Decimal, int]:
        tokens = estimate_request_tokens(request)
        return worst_case_step_cost(self.price, input_tokens=tokens, max_output_tokens=request.max_output_tokens), tokens

    # --- the StepGuard protocol --------------------------------------------------------------

    def answering_worst_case(self, request: ModelRequest, first_tokens: int) -> tuple[Decimal, int]:
        """The least the answering step after one tool call can cost at worst: the first step's
        input again with that step's whole output (the call) added to it."""
        tokens = first_tokens + request.max_output_tokens
        return worst_case_step_cost(self.price, input_tokens=tokens, max_output_tokens=request.max_output_tokens), tokens

    async def precheck(self, request: ModelRequest) -> Reservation:
        """The 429 check: a question starts only when the caps hold room for an answer, a tool
        step and the answering step, reserved together now and kept for steps 0 and 1. So a
        question that passes is never paid for and then stopped after its first step, nor refused
        at its first step by a race. What a step does not use is given back when it settles, and
        the answering step's room when the answer ends without it."""
        await self.release_unused()
        amount, tokens = self.step_worst_case(request)
        answering, answering_tokens = self.answering_worst_case(request, tokens)
        # In the caller's trace when it sent one; the answer's own trace starts after this check.
        with telemetry.span("groundchat.spend.reserve", {attr.SPEND_PHASE: "precheck", attr.SPEND_AMOUNT: str(amount + answering)},
                            only_in_a_trace=True):
            # One transaction for both: holding them one after the other would let concurrent
            # questions each take a first step's room and all fail their second.
            first, second = await self._hold_together([(amount, 0, tokens), (answering, 1, answering_tokens)])
        self._held = {0: first, 1: second}
        return first

    async def reserve(self, request: ModelRequest, step: int, *, kind: str = us.KIND_MODEL_STEP) -> Reservation:
        amount, tokens = self.step_worst_case(request)
        if kind != us.KIND_MODEL_STEP:
            # A step of another kind (a history summary) runs before the precheck: it never uses
            # the answer's held reservation, and its usage row says what it was.
            return await self._hold(amount, kind=kind, step=step, tokens=tokens)
        held = self._held.pop(step, None)
        if held is not None:
            if held.amount >= amount:
                return held
            # The request grew beyond what was held: hold what it needs now instead.
            await self.release(held)
        return await self._hold(amount, kind=us.KIND_MODEL_STEP, step=step, tokens=tokens)

    def _step_charge(self, reservation: Reservation, usage: UsageEvent | None) -> tuple[Decimal, Decimal | None, Decimal]:
        """(our price, the provider's figure, what is charged) for one settled step."""
        if usage is None:
            # Nothing says what the step cost, so it is charged everything it could have cost.
            return reservation.amount, None, reservation.amount
        ours = step_cost(
            self.price,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )
        return ours, usage.provider_cost, charged_cost(self.price, ours, usage.provider_cost)

    async def settle(self, reservation: Reservation | None, usage: UsageEvent | None, *, failed: bool = False,
                     never_billed: bool = False) -> JsonObject:
        """`never_billed`: the step failed before the provider could bill it (models/failures.py), so it
        is settled at $0 and its reservation released."""
        if reservation is None:
            return {"charged": "0"}
        self._open.pop(reservation.id, None)
        ours, provider, charged = ((Decimal(0), None, Decimal(0)) if never_billed
                                   else self._step_charge(reservation, usage))
        if charged > reservation.amount:
            # More than the step could cost: the rules of spending/overrun.py.
            return await settle_over_bound(self, reservation, usage, ours, provider, charged, failed,
                                           block=OVER_BOUND_BLOCK, settle_attempts=SETTLE_ATTEMPTS)
        row = self.usage_row(reservation, usage, ours, provider, charged, failed)
        budget = self.dynamo.name(BUDGET)

        def settles(released: Decimal) -> list[TransactAction]:
            return [bc.settle_op(budget, scope, period, charged, released) for scope, period in reservation.counters]

        outcome = await self.dynamo.run(settle_sync, self.dynamo.client, budget,
                                        self.settlement(reservation, row, settles), SETTLE_ATTEMPTS)
        return await self.charge_summary(reservation, outcome, row)

    def usage_row(self, reservation: Reservation, usage: UsageEvent | None, ours: Decimal, provider: Decimal | None,
                  charged: Decimal, failed: bool) -> us.UsageRow:
        """The usage row of this step (store/usage.py)."""
        return us.UsageRow(
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

    async def charge_summary(self, reservation: Reservation, outcome: str, row: us.UsageRow) -> JsonObject:
        """What the loop and the trace are told a settled step was charged."""
        if outcome == ALREADY:
            return await self._already_settled(row.entry, reservation)
        if outcome == LATE:
            # The sweep released the reservation first (the step outlived its expiry): the money
            # was still spent, so it was charged without releasing anything a second time.
            log.warning("reservation %s was swept before its step settled (run %s)", reservation.id, self.run_id)
        provider = row.provider_cost
        disputed = row.disputed
        return {
            "charged": money_text(row.charged),
            "our_cost": money_text(row.our_cost),
            "provider_cost": money_text(provider) if provider is not None else None,
            "reserved": money_text(reservation.amount),
            "measured": row.measured,
            "reservation_id": reservation.id,
            **({"reservation_expired": True} if outcome == LATE else {}),
            **({"settlement": "pending"} if outcome == PENDING else {}),
            **({"over_bound": True} if row.over_bound else {}),
            **({"disputed": money_text(disputed)} if disputed else {}),
        }

    def settlement(self, reservation: Reservation, row: us.UsageRow,
                   counter_ops: Callable[[Decimal], list[TransactAction]]) -> Settlement:
        """The step's two settlement transactions (spending/settlement.py), the usage row last in
        each; `counter_ops(released)` writes the counters (released: what the reservation gives back)."""
        budget, usage_table = self.dynamo.name(BUDGET), self.dynamo.name(USAGE)
        return Settlement(
            reservation.id, self.run_id,
            normal=[bc.close_reservation_op(budget, reservation.id), *counter_ops(reservation.amount),
                    us.put_usage_op(usage_table, us.usage_item(row))],
            late=[*counter_ops(Decimal(0)),
                  us.put_usage_op(usage_table, us.usage_item(replace(row, reservation_expired=True)))],
        )

    # --- reservations ------------------------------------------------------------------------

    async def release(self, reservation: Reservation) -> bool:
        """Give a reservation back unused. False if it was already settled or swept."""
        self._open.pop(reservation.id, None)
        budget = self.dynamo.name(BUDGET)
        items: list[TransactAction] = [
            bc.close_reservation_op(budget, reservation.id),
            *(bc.release_op(budget, scope, period, reservation.amount) for scope, period in reservation.counters),
        ]
        try:
            await self.dynamo.run(transact_sync, self.dynamo.client, items)
        except TransactionRefused as refused:
            if refused.failed(0):
                return False
            raise
        except TransactionBusy:
            # Still held, which is the safe side: it lapses with its lease and the sweep releases it.
            log.warning("reservation %s could not be released (the budget stayed busy); the sweep will", reservation.id)
            return False
        return True

    async def release_unused(self) -> None:
        """Release the precheck's reservations no step used (the answer ended before it needed them)."""
        held, self._held = self._held, {}
        for reservation in held.values():
            await self.release(reservation)

    async def _hold(self, amount: Decimal, *, kind: str, step: int | None, tokens: int) -> Reservation:
        [reservation] = await self._hold_together([(amount, step, tokens)], kind=kind)
        return reservation

    async def _hold_together(self, steps: list[tuple[Decimal, int | None, int]], *,
                             kind: str = us.KIND_MODEL_STEP) -> list[Reservation]:
        """One reservation per (amount, step, input tokens), held in one conditional transaction:
        all of them fit under every cap, or none is held."""
        now, created_at = timestamp(self.clock)
        caps = caps_for(self.settings, self.caller_id, now, public=self.public)
        total = sum((amount for amount, _, _ in steps), Decimal(0))
        refuse_oversized(caps, total)
        budget = self.dynamo.name(BUDGET)
        expires_at = int(self.clock()) + self.reservation_ttl_seconds
        ids = [uuid.uuid4().hex for _ in steps]

        def puts(counters: list[tuple[str, str]]) -> list[TransactAction]:
            # The reservation names the shards it holds, so its settlement (or the sweep) finds them.
            return [bc.put_reservation_op(budget, bc.reservation_item(
                rid, amount=amount, counters=counters, expires_at=expires_at, created_at=created_at, caller=self.caller_id,
                run_id=self.run_id, conversation_id=self.conversation_id, model=self.model_id, kind=kind, step=step))
                for rid, (amount, step, _) in zip(ids, steps)]

        counters = await hold_within_caps(self.dynamo, self.settings, caps, total, into="reserved", rest=puts)
        reservations = [Reservation(id=rid, kind=kind, step=step, amount=amount, counters=tuple(counters), created_at=created_at,
                                    expires_at=expires_at, input_tokens_estimate=tokens)
                        for rid, (amount, step, tokens) in zip(ids, steps)]
        self._open.update((r.id, r) for r in reservations)
        return reservations

    async def renew(self) -> int:
        """Extends every reservation this request still holds by a lease (the heartbeat's call);
        how many were. One the sweep already released is left alone: its settle still charges."""
        until = int(self.clock()) + self.reservation_ttl_seconds
        budget = self.dynamo.name(BUDGET)
        renewed = 0
        for reservation in list(self._open.values()):
            if await self.dynamo.run(bc.renew_reservation_sync, self.dynamo.client, budget, reservation.id, until):
                renewed += 1
        return renewed

    async def _already_settled(self, entry: str, reservation: Reservation) -> JsonObject:
        row = await self.dynamo.run(us.get_usage_row_sync, self.dynamo.client, self.dynamo.name(USAGE), self.run_id, entry) or {}
        return {"charged": money_text(item_values.amount(row, "charged", reservation.amount)), "reservation_id": reservation.id}
