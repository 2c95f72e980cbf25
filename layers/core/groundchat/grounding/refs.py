"""How an answer cites a passage: its ref, the first eight hex digits of the chunk id, in brackets."""
from __future__ import annotations

import re

CITATION = re.compile(r"\[([0-9a-f]{8})\]")
