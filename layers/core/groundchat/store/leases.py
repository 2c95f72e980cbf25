"""How long what an answer holds lives without it: the claim on its conversation and its spending
reservations are leases the answering process renews (`chat/loop.py`'s heartbeat), so a process
that dies (kill -9, a Lambda timeout) leaves them for about a minute, not for the longest answer.

A new process takes a lapsed claim over (the claim's condition accepts an `active_until` in the
past), and the sweep (every minute) releases a lapsed reservation; a step that settles after its
reservation was swept is still charged (spending/budget_guard.py).
"""
from __future__ import annotations

# Long enough to miss three renewals in a row (a slow store, a busy event loop).
LEASE_SECONDS = 60
RENEW_SECONDS = 15
