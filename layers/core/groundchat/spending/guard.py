"""The spending hooks the loop calls around every model step. Budget code implements them."""
from __future__ import annotations

from typing import Any, Protocol

from groundchat.models.messages import ModelRequest, UsageEvent


class SpendCapReached(Exception):
    """A reservation was refused: the step could pass a cap."""

    def __init__(self, scope: str, message: str, resets_at: str | None = None) -> None:
        super().__init__(message)
        self.scope = scope
        self.message = message
        self.resets_at = resets_at


class StepGuard(Protocol):
    async def reserve(self, request: ModelRequest, step: int) -> Any:
        """Reserve the step's worst case; raise SpendCapReached if it could pass a cap."""

    async def settle(self, reservation: Any, usage: UsageEvent | None, *, failed: bool = False) -> dict[str, Any]:
        """Charge the real cost (or the full reservation when usage is None); return the charge."""


class NoSpendGuard:
    """For the offline answerer and tests that are not about money: nothing is reserved."""

    async def reserve(self, request: ModelRequest, step: int) -> None:
        return None

    async def settle(self, reservation: Any, usage: UsageEvent | None, *, failed: bool = False) -> dict[str, Any]:
        return {"charged": "0"}
