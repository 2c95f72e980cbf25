"""Public mode's rate limit: a sliding window per visitor key, counted in DynamoDB (moto) by
conditional updates, so every instance shares it and racing requests cannot overrun it."""
from __future__ import annotations

import asyncio
import time
from collections import Counter

from groundchat.public.addresses import address_key, source_ip_from_request_context
from groundchat.public.rate_limit import SlidingWindowLimiter
from groundchat.store.rate_limits import RateLimitStore, bucket
from groundchat.store.tables import RATE_LIMITS
from groundchat_testkit.clock import ManualClock

WINDOW = 60
# Mid-window, so one whole burst falls in one fixed window.
T0 = 1_800_000_000 - 1_800_000_000 % WINDOW + 20.0


async def test_exactly_the_limit_passes_in_a_window_then_429_with_when_to_come_back(dynamo):
    clock = ManualClock(T0)
    limiter = SlidingWindowLimiter(RateLimitStore(dynamo), limit=3, window_seconds=WINDOW, clock=clock)
    decisions = [await limiter.admit("k") for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    # 20 s into the window with 3 hits: the earliest pass is when those hits have slid out far
    # enough in the next window: 40 s to its start, then 1/3 of a window (20 s) = 60 s.
    assert decisions[3].retry_after_seconds == 60
    assert await limiter.admit("other") == decisions[0]  # another key has its own window


async def test_the_window_slides_the_previous_hits_weigh_as_much_as_still_overlaps(dynamo):
    clock = ManualClock(T0)
    limiter = SlidingWindowLimiter(RateLimitStore(dynamo), limit=4, window_seconds=WINDOW, clock=clock)
    assert all([(await limiter.admit("k")).allowed for _ in range(4)])
    # 10 s into the next window: 50/60 of the 4 previous hits still count (3.33, rounded up to 4).
    clock.now = T0 - 20 + WINDOW + 10
    refused = await limiter.admit("k")
    assert not refused.allowed
    # It passes once the carried weight is 3: 4 * (60 - e) / 60 <= 3, so e >= 15 s: 5 s from now.
    assert refused.retry_after_seconds == 5
    clock.now += 5
    assert (await limiter.admit("k")).allowed
    assert not (await limiter.admit("k")).allowed
    # Half way through: 2 carried, 1 taken: one more passes.
    clock.now = T0 - 20 + WINDOW + 30
    assert [(await limiter.admit("k")).allowed for _ in range(2)] == [True, False]
    # 20 s into the window after: 40/60 of those 2 hits still count, so 2 pass.
    clock.now = T0 + 2 * WINDOW
    assert [(await limiter.admit("k")).allowed for _ in range(3)] == [True, True, False]
    # Once a whole window has passed without a hit, nothing is carried: the full limit again.
    clock.now = T0 + 4 * WINDOW
    assert [(await limiter.admit("k")).allowed for _ in range(5)] == [True] * 4 + [False]


async def test_items_have_a_ttl_and_hold_no_address(dynamo, settings):
    clock = ManualClock(T0)
    limiter = SlidingWindowLimiter(RateLimitStore(dynamo), limit=2, window_seconds=WINDOW, clock=clock)
    key = address_key("s" * 32, "203.0.113.7")
    await limiter.admit(key)
    items = dynamo.client.scan(TableName=dynamo.name(RATE_LIMITS))["Items"]
    assert [i["bucket"]["S"] for i in items] == [bucket(key, int(T0 - 20))]
    # Read as the previous window for one more window, then DynamoDB's TTL deletes it.
    assert int(items[0]["expires_at"]["N"]) == int(T0 - 20) + 2 * WINDOW + 1
    assert "203.0.113.7" not in str(items) and len(key) == 32
    ttl = dynamo.client.describe_time_to_live(TableName=dynamo.name(RATE_LIMITS))["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}


def test_the_address_key_is_keyed_by_the_secret_and_the_address():
    assert address_key("a" * 32, "203.0.113.7") == address_key("a" * 32, "203.0.113.7")
    assert address_key("a" * 32, "203.0.113.7") != address_key("b" * 32, "203.0.113.7")
    assert address_key("a" * 32, "203.0.113.7") != address_key("a" * 32, "203.0.113.8")
    # No address read: one shared bucket, never a free pass.
    assert address_key("a" * 32, None) == address_key("a" * 32, "")


def test_the_source_ip_is_api_gateways_not_a_header_the_client_sets():
    context = '{"requestId": "r", "identity": {"sourceIp": "198.51.100.4", "userAgent": "x"}}'
    assert source_ip_from_request_context(context) == "198.51.100.4"
    for bad in (None, "", "not json", "[]", '{"identity": "x"}', '{"identity": {"sourceIp": 5}}'):
        assert source_ip_from_request_context(bad) is None


async def test_flood_1000_requests_from_50_keys_at_once_exactly_the_limit_passes_per_key(dynamo):
    """1,000 requests from 50 visitor keys, all at once, through the real conditional updates."""
    limit, keys, per_key = 5, 50, 20
    limiter = SlidingWindowLimiter(RateLimitStore(dynamo), limit=limit, window_seconds=WINDOW, clock=ManualClock(T0))
    names = [address_key("f" * 32, f"192.0.2.{i}") for i in range(keys)]
    requests = [names[i % keys] for i in range(keys * per_key)]
    started = time.perf_counter()
    decisions = await asyncio.gather(*(limiter.admit(k) for k in requests))
    elapsed = time.perf_counter() - started
    passed = Counter(k for k, d in zip(requests, decisions) if d.allowed)
    assert sum(passed.values()) == limit * keys == 250
    assert set(passed.values()) == {limit} and len(passed) == keys
    assert all(d.retry_after_seconds >= 1 for d in decisions if not d.allowed)
    # What the table holds agrees: `limit` hits counted per key, never more.
    items = dynamo.client.scan(TableName=dynamo.name(RATE_LIMITS))["Items"]
    assert sorted(int(i["hits"]["N"]) for i in items) == [limit] * keys
    print(f"\nflood: {len(requests)} requests, {keys} keys, limit {limit}: {sum(passed.values())} passed "
          f"({limit} per key), {len(requests) - sum(passed.values())} refused, {elapsed:.2f} s on moto")
