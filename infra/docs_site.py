"""MkDocs hooks for the documentation site (mkdocs.yml): the configuration table is written from
`Settings` at build time, so the names, defaults and descriptions have one source, the code."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

SETTINGS_MARK = "<!-- settings-table -->"


def settings_table() -> str:
    from groundchat.config import Settings

    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        rows.append(f"| `GROUNDCHAT_{name.upper()}` | {default_text(field.default)} | "
                    f"{' '.join((field.description or '').split())} |")
    return "\n".join(rows)


def default_text(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, (Decimal, Path, int, float, str)):
        return f"`{value}`"
    return f"`{value!r}`"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if SETTINGS_MARK in markdown:
        return markdown.replace(SETTINGS_MARK, settings_table())
    return markdown
