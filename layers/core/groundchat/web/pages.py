"""Filling a page's `{{MARKER}}`s in one pass: a value is never scanned for markers again, so
text a user wrote (a question titled "{{DATA}}") is only ever text."""
from __future__ import annotations

import html
import json
import re
from typing import Mapping

_MARKER = re.compile(r"\{\{([A-Z_]+)\}\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Each known marker replaced by its value (already escaped for where it stands); unknown
    markers are left as they are."""
    return _MARKER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def sign_in_kind(auth_mode: str) -> str:
    """What a page's `data-sign-in` says: "oidc" where /auth/session exists (the session is an
    HttpOnly cookie the page can only ask about), the auth mode's own name elsewhere, so a page of
    a dev deployment never asks for a route that is not there."""
    return "oidc" if auth_mode == "oidc" else html.escape(auth_mode)


def tool_drawers() -> str:
    """What a page's `#tool-drawers` holds: each tool's drawer (tools/catalog.py `page_drawers`), as
    JSON that cannot end its <script type="application/json"> element early."""
    from groundchat.tools.catalog import page_drawers

    return json.dumps(page_drawers()).replace("<", "\\u003c")
