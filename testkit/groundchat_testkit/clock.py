"""A clock a test sets by hand: read as `clock.time()` where code takes a `time`-like object, or
called as `clock()` where it takes a function; `clock.now` moves it."""
from __future__ import annotations


class ManualClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def __call__(self) -> float:
        return self.now


__all__ = ["ManualClock"]
