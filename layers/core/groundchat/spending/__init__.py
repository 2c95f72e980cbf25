"""Money: the price table, token estimates, the guard that reserves and settles every model step
and charges every search against the caps, and the operator's actions (sweep, status, reset)."""
