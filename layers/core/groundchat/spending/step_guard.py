"""The spending hooks the loop calls around every model step. There is always a guard: the
budget guard (`spending.budget_guard`) for a priced model, or the no-spend guard, which says so."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from groundchat.models.messages import ModelRequest, UsageEvent

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


class SpendCapReached(Exception):
    """A reservation was refused: the step could pass a cap."""

    code = "spend-cap"  # the refusal's code (a 429's `error.code`)

    def __init__(self, scope: str, message: str, resets_at: str | None = None) -> None:
        super().__init__(message)
        self.scope = scope
        self.message = message
        self.resets_at = resets_at


class SpendingBusy(SpendCapReached):
    """A reservation was refused because the budget's transactions kept meeting others: nothing
    was held or spent, and asking again a moment later may pass."""

    code = "spend-busy"


class StepGuard(Protocol):
    # True when a step without a usage report cannot be priced: it is charged its full
    # reservation and the answer stops (`unmeasurable-cost`).
    requires_usage: bool

    # A reservation is each guard's own (BudgetGuard's `Reservation`, the no-spend guard's None): the
    # loop only hands what `reserve` returned back to `settle`.
    async def reserve(self, request: ModelRequest, step: int, *, kind: str = "model-step") -> Any:
        """Reserve the step's worst case; raise SpendCapReached if it could pass a cap. `kind`
        names the step in its usage row (`model-step`, or `history-summary`)."""

    async def settle(self, reservation: Any, usage: UsageEvent | None, *, failed: bool = False,
                     never_billed: bool = False) -> JsonObject:
        """Charge the real cost (or the full reservation when usage is None; nothing when the step
        failed before the provider could bill it); return the charge."""
        ...


class NoSpendGuard:
    """For tests and tools that are not about money: nothing is reserved or charged, so a step
    without a usage report costs nothing and does not stop the answer."""

    requires_usage = False

    async def reserve(self, request: ModelRequest, step: int, *, kind: str = "model-step") -> None:
        return None

    async def settle(self, reservation: object, usage: UsageEvent | None, *, failed: bool = False,
                     never_billed: bool = False) -> JsonObject:
        return {"charged": "0"}
