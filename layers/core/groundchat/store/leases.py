"""How long what an answer holds lives without it: the claim on its conversation and its spending
reservations are leases the answering process renews (`chat/loop.py`'s heartbeat), so a process
that dies (kill -9, a Lambda timeout) leaves them for about a minute (its claim and its record as
the answer in progress, a quarter of that), not for the longest answer.

A new process takes a lapsed claim over (the claim's condition accepts an `active_until` in the
past), and the sweep (every minute) releases a lapsed reservation; a step that settles after its
reservation was swept is still charged (spending/budget_guard.py).
"""
from __future__ import annotations

# The spending reservations: long enough to miss three renewals in a row (a slow store, a busy
# event loop); the sweep that releases a lapsed one runs every minute anyway.
LEASE_SECONDS = 60
RENEW_SECONDS = 15
# What a reader sees: the answer's record and its claim on the conversation. A reconnect reads
# `interrupted`, and the conversation takes a new question, as soon as this lapses, so it is
# short: renewed every beat, it lapses at most 15 s after the process died
# (bench/reconnect_after_kill.py measures it).
CLAIM_LEASE_SECONDS = 15
BEAT_SECONDS = 5
