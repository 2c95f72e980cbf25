"""One verdict on a proposed view: the view if it may be shown, else every problem to fix."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from pydantic import ValidationError

from groundchat.views.actions import form_problems, returned_values
from groundchat.views.catalog import View
from groundchat.grounding.view_numbers import ungrounded
from groundchat.json_shapes import as_list

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


def review(raw: JsonObject, tool_results: Iterable[JsonObject]) -> tuple[View | None, list[str]]:
    """Schema, grounding and form checks together, so one refusal lists everything at once."""
    results = list(tool_results)
    problems: list[str] = []
    view: View | None = None
    try:
        view = View.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_schema_problems(exc))
    problems.extend(ungrounded(raw, results))
    valid = returned_values(results)
    parts = as_list(raw.get("parts"))
    for i, part in enumerate(parts):
        if isinstance(part, dict) and part.get("type") == "form":
            problems.extend(form_problems(part, f"parts[{i}] (form)", valid))
    return (view if not problems else None), problems


def _schema_problems(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors():
        # The union's tag ("table", "stats") sits in the path; it says which component was checked.
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".") or "view"
        message = "unknown key (not in the catalog)" if err["type"] == "extra_forbidden" else err["msg"]
        out.append(f"{where}: {message}")
    return out
