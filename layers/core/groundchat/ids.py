"""What the ids we hand out look like, so a malformed one is refused at the edge (404) before any
store call: real DynamoDB refuses keys over 2,048 bytes, and no such id was ever ours."""
from __future__ import annotations

import re

# Conversation ids and answer (trace) run ids: 128 random bits as 32 lowercase hex digits.
_HEX_128 = re.compile(r"[0-9a-f]{32}")
# Benchmark run ids come from the imported files; `get_run` accepts up to this many characters.
MAX_BENCHMARK_RUN_ID_CHARS = 128


def is_conversation_id(value: str) -> bool:
    return bool(_HEX_128.fullmatch(value))


def is_answer_run_id(value: str) -> bool:
    return bool(_HEX_128.fullmatch(value))


def is_benchmark_run_id(value: str) -> bool:
    return 0 < len(value) <= MAX_BENCHMARK_RUN_ID_CHARS and value.isprintable()
