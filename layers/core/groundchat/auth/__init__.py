"""Who is asking (callers and their permissions) and how a token becomes a caller."""
