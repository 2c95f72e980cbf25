"""Checking an answer against what its tools returned: the walk over tool results, citations,
the numbers in views, and the ceiling on one tool result."""
