"""`explain_rule`: the exact axe rule → WCAG lookup, with each criterion's text from the document index."""
from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Awaitable, TypeVar, cast

from groundchat.auth.callers import DOCS_READ
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.lazy import resolved
from groundchat.tools.base import ToolContext, ToolError, define_tool
from groundchat.tools.data_shapes import RUN_LINKS, CriterionOut, ExplainRuleArgs, ExplainRuleResult, UnderstandingOut

if TYPE_CHECKING:
    from groundchat.search.service import SearchService
    from groundchat.tools.base import RuleLookup

T = TypeVar("T")

_CRITERION_TEXT_CHARS = 1200


def _rules(ctx: ToolContext) -> RuleLookup:
    rules = resolved(ctx.rules)
    if rules is not None:
        return rules
    from groundchat.benchmark import axe_rules as rules

    return rules


@define_tool(
    name="explain_rule",
    description=(
        "The WCAG 2.2 success criterion behind an axe-core rule, exactly as the rule's tags name it: "
        "number, handle, level, URL, and the criterion's text with its ref where the document index has it. "
        "A best-practice rule says 'no WCAG criterion'."
    ),
    input_model=ExplainRuleArgs,
    permission=DOCS_READ,
    output_model=ExplainRuleResult,
    grounding=Grounding.TEXT,
    drawer=Drawer.RULE,
    offline_template=OfflineTemplate.RULE,
)
async def explain_rule(ctx: ToolContext, args: ExplainRuleArgs) -> ExplainRuleResult:
    from groundchat.benchmark.axe_rules import NO_WCAG, UnknownRule

    try:
        facts = _rules(ctx).explain(args.rule_id)
    except UnknownRule as exc:
        raise ToolError(str(exc)) from exc
    criteria = [CriterionOut(**c.model_dump()) for c in facts.criteria]
    status = "not requested"
    docs = resolved(ctx.docs) if criteria else None
    if docs is not None:
        status = await _add_criterion_text(docs, criteria)
    if criteria:
        wcag = "; ".join(
            f"{c.number} {c.handle}" + (f" (Level {c.level})" if c.level else " (obsolete and removed in WCAG 2.2)")
            for c in criteria
        )
    else:
        wcag = NO_WCAG
    return ExplainRuleResult(
        rule_id=facts.rule_id,
        impact=facts.impact,
        best_practice=facts.best_practice,
        wcag=wcag,
        wcag_tags=facts.wcag_tags,
        criteria=criteria,
        help_url=facts.help_url,
        axe_version=facts.axe_version,
        link=RUN_LINKS.run_list(rule=facts.rule_id),
        criterion_text=status,
    )


async def _add_criterion_text(docs: SearchService, criteria: list[CriterionOut]) -> str:
    """The normative text and its ref from the document index. The mapping itself never depends
    on the index: if it cannot answer, the criteria stand and the status says why."""
    try:
        for c in criteria:
            found = await _criterion_passage(docs, c.number)
            if found is not None:
                text, ref = found
                c.text = text if len(text) <= _CRITERION_TEXT_CHARS else text[:_CRITERION_TEXT_CHARS].rstrip() + " …"
                c.ref = ref
                c.source, c.section, c.title = "wcag22", c.number, f"{c.number} {c.handle}"
                c.why = await _understanding(docs, c.number)
    except Exception as exc:  # an index that is down or missing must not break the exact lookup
        return f"unavailable: {type(exc).__name__}"
    if any(c.text is None for c in criteria):
        return "unavailable: criterion not in the index"
    return "added"


async def _criterion_passage(docs: SearchService, number: str) -> tuple[str, str] | None:
    if hasattr(docs, "get_section"):  # exact lookup by section: the criterion number
        chunk = await _maybe_await(asyncio.to_thread(docs.get_section, "wcag22", number))
        if chunk is not None:
            return _field(chunk, "text"), _field(chunk, "ref")
        return None
    result = await _maybe_await(asyncio.to_thread(docs.search, number, k=5, sources=["wcag22"]))
    for passage in _field(result, "passages") or []:
        if _field(passage, "section") == number:
            return _field(passage, "text"), _field(passage, "ref")
    return None


async def _understanding(docs: SearchService, number: str) -> UnderstandingOut | None:
    """The criterion's Understanding intent (why it matters), by exact section; None where not indexed."""
    if not hasattr(docs, "get_section"):
        return None
    chunk = await _maybe_await(asyncio.to_thread(docs.get_section, "wcag22", f"Understanding {number}"))
    if chunk is None:
        return None
    text = _field(chunk, "text")
    return UnderstandingOut(ref=_field(chunk, "ref"), section=_field(chunk, "section"), title=_field(chunk, "title"),
                            url=_field(chunk, "url"),
                            text=text if len(text) <= _CRITERION_TEXT_CHARS else text[:_CRITERION_TEXT_CHARS].rstrip() + " …")


async def _maybe_await(value: Awaitable[T]) -> T:
    done = await value
    if inspect.isawaitable(done):  # a search whose methods are themselves async (a test's)
        return cast(T, await done)
    return done


def _field(obj: object, name: str) -> Any:  # a model's attribute or a dict's key, whichever it has
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

