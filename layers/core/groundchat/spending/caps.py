"""The caps a caller's spending counts against (the chat's and their own, and for an anonymous
visitor of a public chat also the visitors' shared one), and the refusal that says which one a
step could pass and what is left."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from groundchat.spending.step_guard import SpendCapReached
from groundchat.money import cost_text
from groundchat.store import budget_counters as bc

if TYPE_CHECKING:
    from groundchat.config import Settings


@dataclass(frozen=True)
class Cap:
    scope: str  # counter scope: "chat", "public" or "user#<id>"
    period: str  # "total" or "2026-11"
    limit: Decimal
    resets_at: str | None

    @property
    def public_scope(self) -> str:
        return self.scope if self.scope in (bc.CHAT_SCOPE, bc.PUBLIC_SCOPE) else "user"


def caps_for(settings: Settings, caller_id: str, now: dt.datetime | None = None, *, public: bool = False) -> list[Cap]:
    """The caps a caller's spending counts against, in a fixed order (chat, public, user, so two
    transactions never take the counters in opposite orders). `public`: an anonymous visitor,
    whose spending also counts against the visitors' shared ceiling."""
    now = now or dt.datetime.now(dt.timezone.utc)
    period = bc.period_key(settings.budget_period, now)
    resets = bc.resets_at(settings.budget_period, now)
    caps = [Cap(bc.CHAT_SCOPE, period, Decimal(settings.budget_usd), resets)]
    if public:
        ceiling = getattr(settings, "public_budget_usd", None)
        # Public mode never starts without a ceiling; a visitor met without one gets none to spend.
        caps.append(Cap(bc.PUBLIC_SCOPE, period, Decimal(ceiling if ceiling is not None else 0), resets))
    caps.append(Cap(bc.user_scope(caller_id), period, Decimal(settings.user_budget_usd), resets))
    return caps


def refusal(cap: Cap, amount: Decimal, counter: bc.Counter | None) -> SpendCapReached:
    if counter is not None and counter.blocked:
        return SpendCapReached(cap.public_scope, f"Spending is stopped: {counter.blocked}. Nothing more is spent until "
                                                 "an operator has looked (groundchat budget unblock).")
    committed = counter.committed if counter else Decimal(0)
    left = max(Decimal(0), cap.limit - committed)
    whose = {bc.CHAT_SCOPE: "The chat's spending cap", bc.PUBLIC_SCOPE: "The spending cap for visitors"}.get(cap.scope, "Your spending cap")
    period = " for this month" if cap.resets_at else ""
    when = f" It resets at {cap.resets_at}." if cap.resets_at else ""
    message = (
        f"{whose} of {cost_text(cap.limit)}{period} is reached: the next step could cost up to "
        f"{cost_text(amount)} and {cost_text(left)} is left.{when}"
    )
    return SpendCapReached(cap.public_scope, message, cap.resets_at)


def timestamp(clock: Callable[[], float]) -> tuple[dt.datetime, str]:
    """Now as a datetime (for the cap's period) and as the ISO text stored on rows."""
    now = dt.datetime.fromtimestamp(clock(), dt.timezone.utc)
    return now, now.isoformat(timespec="microseconds").replace("+00:00", "Z")


def refuse_oversized(caps: list[Cap], amount: Decimal) -> None:
    # The counter condition cannot express a negative bound for a counter not yet written,
    # so an amount no cap could ever hold is refused here, before any write.
    for cap in caps:
        if amount > cap.limit:
            raise refusal(cap, amount, None)
