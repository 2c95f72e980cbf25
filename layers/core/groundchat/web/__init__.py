"""The page assets both functions serve (the transcript's script and style)."""
