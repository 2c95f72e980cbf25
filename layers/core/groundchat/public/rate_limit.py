"""Guard 1: a sliding window per visitor key, shared by every instance through DynamoDB.

The window slides by weighting: the hits of the previous fixed window count in proportion to how
much of it still lies inside the sliding window ending now, and the current window gets the room
that leaves (taken with a conditional update, so racing requests cannot overrun it). Within one
fixed window exactly `limit` requests pass; across a boundary no sliding window of the same length
holds more than `limit`, up to the rounding of the carried weight (always rounded against the
visitor). Times are integer milliseconds: no float decides who passes."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol


class CounterStore(Protocol):
    async def hits(self, key: str, window_start: int) -> int: ...

    async def take(self, key: str, window_start: int, room: int, expires_at: int) -> tuple[bool, int]: ...


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after_seconds: int = 0  # when a request could pass again, if nobody else asks meanwhile


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class SlidingWindowLimiter:
    def __init__(self, store: CounterStore, limit: int, window_seconds: int, clock: Callable[[], float] = time.time) -> None:
        if limit <= 0 or window_seconds <= 0:
            raise ValueError("a rate limit needs a positive limit and window")
        self.store = store
        self.limit = limit
        self.window_ms = window_seconds * 1000
        self.clock = clock

    async def admit(self, key: str) -> RateDecision:
        window = self.window_ms
        now = int(self.clock() * 1000)
        start = now - now % window
        elapsed = now - start
        previous = await self.store.hits(key, (start - window) // 1000)
        carried = _ceil_div(previous * (window - elapsed), window)
        room = self.limit - carried
        if room > 0:
            # Kept until the next window has stopped reading it as its previous one.
            expires_at = (start + 2 * window) // 1000 + 1
            taken, counted = await self.store.take(key, start // 1000, room, expires_at)
            if taken:
                return RateDecision(True)
            current = counted
        else:
            current = await self.store.hits(key, start // 1000)
        return RateDecision(False, self._retry_after(previous, current, elapsed))

    def _retry_after(self, previous: int, current: int, elapsed: int) -> int:
        window, limit = self.window_ms, self.limit
        wait: int | None = None
        spare = limit - current - 1  # what the carried weight may be for one more request now
        if spare >= 0 and previous > 0:
            # Later in this window, once enough of the previous one has slid out.
            at = window - (spare * window) // previous
            if at < window:
                wait = max(1, at - elapsed)
        if wait is None:
            # In the next window, this one's hits become the carried ones.
            at = window - ((limit - 1) * window) // current if current > 0 else 0
            wait = (window - elapsed) + max(0, at)
        return max(1, _ceil_div(wait, 1000))
