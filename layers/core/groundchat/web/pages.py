"""Filling a page's `{{MARKER}}`s in one pass: a value is never scanned for markers again, so
text a user wrote (a question titled "{{DATA}}") is only ever text."""
from __future__ import annotations

import re
from typing import Mapping

_MARKER = re.compile(r"\{\{([A-Z_]+)\}\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Each known marker replaced by its value (already escaped for where it stands); unknown
    markers are left as they are."""
    return _MARKER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
