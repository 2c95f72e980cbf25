"""The one retry policy both real adapters use.

Only failures the classifier marked retryable (throttling, 5xx, a connection that never opened) are
tried again, only before the step has yielded anything (the loop has already streamed those events
to the reader), and only while the whole step stays inside its time limit. A 4xx is never retried.
"""
from __future__ import annotations

import asyncio
import random
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import AsyncGenerator, Awaitable, Callable, TypeVar

from groundchat.models.failures import ModelFailure

E = TypeVar("E")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    # Seconds one model step may spend, waits included; a wait that would pass it is not taken.
    time_limit: float = 90.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with jitter (so parallel requests do not retry in step); the
        provider's Retry-After wins where it asks for longer."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        wait = ceiling * random.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait


NO_RETRY = RetryPolicy(attempts=1)


async def stream_with_retries(open_stream: Callable[[], AsyncGenerator[E, None]], policy: RetryPolicy) -> AsyncGenerator[E, None]:
    """Iterate a fresh stream per attempt; retry a retryable ModelFailure raised before the first event."""
    started = policy.clock()
    attempt = 0
    while True:
        attempt += 1
        yielded = False
        try:
            # aclosing: a consumer that stops early closes the provider's stream (and its
            # connection) now, not whenever the garbage collector gets to it.
            async with aclosing(open_stream()) as stream:
                async for event in stream:
                    yielded = True
                    yield event
            return
        except ModelFailure as failure:
            # The trace shows how many tries a failure took.
            failure.extra["attempts"] = attempt
            if yielded or not failure.retryable or attempt >= policy.attempts:
                raise
            wait = policy.delay(attempt, failure.retry_after)
            if policy.clock() - started + wait > policy.time_limit:
                raise
        await policy.sleep(wait)
