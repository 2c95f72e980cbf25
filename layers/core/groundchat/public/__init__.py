"""Public mode: anonymous visitors of a public site, and the three guards such a chat must have
before it may start (a rate limit per visitor address, a bot wall, a spending ceiling for all
visitors together). A public chat is an open spending faucet whose volume strangers decide, so
every guard is required, never optional."""
