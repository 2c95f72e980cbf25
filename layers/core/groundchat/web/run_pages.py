"""The run list page's data: one page of runs under a filter, where it sits in the whole list
("Runs 21–40 of 137"), and the addresses of the pages before and after it.

The filter is the `list_runs` tool's (the same fields, checked the same way: an unknown value is an
error naming the valid ones), the rows are its rows, and the count comes from the runs' views, so
no page reads more runs than it shows. A page is named by an opaque token: the list key of the run
it starts after (or before) and that run's position, so "next" and "previous" cost one Query each
however deep the list goes. In a violations order (`order`) the key is the violations index's, and
the token names the order, so it is never read as a key of another order's list.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Mapping

from pydantic import Field, ValidationError

from groundchat.tools.base import ToolContext, ToolError
from groundchat.tools.data_shapes import ListRunsArgs
from groundchat.benchmark.runs import NEWEST
from groundchat.tools.data_tools import _check_filter, _run_row, _runs, check_order  # the list_runs tool's own checks and rows

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

PAGE_SIZE = 20


class RunPageArgs(ListRunsArgs):
    limit: int = Field(default=PAGE_SIZE, ge=1, le=100)
    page: str | None = Field(default=None, max_length=400, description="a `next` or `previous` token of an earlier page")


def page_args(params: Mapping[str, object]) -> RunPageArgs:
    """The page a query string asks for; ToolError with one line naming each bad field."""
    try:
        return RunPageArgs.model_validate(params)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()]
        raise ToolError("invalid filter: " + "; ".join(problems)) from None


def page_token(direction: str, key: str, position: int, order: str = NEWEST) -> str:
    """`direction` is "after" (the next page: further down the list) or "before" (the previous
    page); `position` is the 1-based place of the run whose list key is `key` in the list in
    `order` (named in the token unless it is the default, so tokens of the newest list stay as
    they were)."""
    data: dict[str, str | int] = {direction: key, "n": position}
    if order != NEWEST:
        data["o"] = order
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_token(token: str, order: str = NEWEST) -> tuple[str, str, int]:
    """(direction, key, position) of a token `page_token` made for a list in `order`; ToolError for
    anything else (a token of another order's list included: its key means nothing here)."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        (direction,) = set(data) - {"n", "o"}
        key, position = data[direction], data["n"]
        if (direction in ("after", "before") and isinstance(key, str) and key and isinstance(position, int)
                and position >= 1 and data.get("o", NEWEST) == order):
            return direction, key, position
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        pass
    raise ToolError("page: not a page of this run list; start again from the first page")


async def run_page(ctx: ToolContext, args: RunPageArgs) -> JsonObject:
    flt = args.to_filter()
    check_order(flt, args.order)
    await _check_filter(ctx, flt)
    runs = _runs(ctx)
    direction, key, position = read_token(args.page, args.order) if args.page else ("after", None, 0)
    if direction == "before":
        page = await runs.page_runs(flt, args.limit, before=key, order=args.order)
        # The position is the token's: runs added since it was made move a page, not its rows.
        start = max(1, position - len(page.runs)) if page.newer else 1
    else:
        page = await runs.page_runs(flt, args.limit, after=key, order=args.order)
        start = position + 1
    end = start + len(page.runs) - 1
    rows: list[JsonValue] = [_run_row(run).model_dump(mode="json") for run in page.runs]
    values: JsonObject = {name: [*options] for name, options in (await runs.facets()).items()}
    shown_filter: JsonObject = {**flt.as_params()}
    return {
        "filter": shown_filter, "order": args.order, "limit": args.limit, "count": len(rows), "more": page.older,
        "total": page.total, "start": start if rows else 0, "end": end if rows else 0,
        "next": page_token("after", page.last_key, end, args.order) if page.older and page.last_key else None,
        "previous": page_token("before", page.first_key, start, args.order) if page.newer and page.first_key else None,
        "runs": rows, "values": values,
    }
