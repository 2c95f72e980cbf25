"""Defining tools and deciding, per caller, which ones the model is offered and may run."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from groundchat.auth.callers import Can, Caller
from groundchat.exchange.state import AnswerState
from groundchat.json_shapes import JsonValue
from groundchat.lazy import Lazy
from groundchat.models.messages import ToolSpec
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.search.preferences import SearchPreferences
from groundchat.tools.compact_schema import compact_object

if TYPE_CHECKING:
    from groundchat.benchmark.axe_rules import RuleFacts
    from groundchat.json_shapes import JsonObject
    from groundchat.recall.hooks import RecallAccess
    from groundchat.search.service import SearchService
    from groundchat.store.runs import RunsStore


class ToolDefinitionError(ValueError):
    """A tool was defined without something every tool must have."""


class ToolError(Exception):
    """A tool refusing its input in words the model can act on (e.g. listing valid values)."""


class ToolNotFound(ToolError):
    """The thing the input names does not exist (e.g. no run with that id): 404 on a page route."""


class RuleLookup(Protocol):
    """The axe rule -> WCAG table: benchmark/axe_rules.py's `RuleTable`, or that module itself."""

    def explain(self, rule_id: str) -> RuleFacts: ...


@dataclass
class ToolContext:
    """Built by the app per caller and request. Tools reach data only through what is here."""

    caller: Caller
    run_id: str = ""
    conversation_id: str = ""
    # Read-only views of the stores and indexes this deployment has: each itself, or a `Lazy` that
    # builds it when a tool first reaches for it (`resolved`); None where absent.
    runs: RunsStore | Lazy[RunsStore] | None = None
    docs: SearchService | Lazy[SearchService] | None = None
    rules: RuleLookup | Lazy[RuleLookup] | None = None
    # The caller's recall index, set only when this question's recall plan allows a search.
    recall: RecallAccess | None = None
    # Charged for a search (given its query) before it runs; None where nothing is charged.
    charge_search: Callable[[str], Awaitable[JsonObject]] | None = None
    # The answer this call belongs to: its results so far, annotations, frames to send, debug.
    answer: AnswerState = field(default_factory=AnswerState)
    # What the request asked of its searches (sources, top_k, legs): they only narrow.
    search: SearchPreferences = field(default_factory=SearchPreferences)


# Called with the tool's own input model, validated (each handler names its subclass: no one type
# fits every handler's second parameter); returns its output model or JSON.
Handler = Callable[[ToolContext, Any], Awaitable[BaseModel | JsonValue]]


# What each of a tool's facts says, for the words of a definition that lacks one.
_FACTS: dict[str, tuple[type[StrEnum], str]] = {
    "grounding": (Grounding, "whether its figures ground a view"),
    "drawer": (Drawer, "how the page draws it"),
    "offline_template": (OfflineTemplate, "how the offline answerer writes from it"),
}
_Fact = TypeVar("_Fact", bound=StrEnum)


@dataclass(frozen=True)
class Tool:
    """A tool and every fact of it: the other wings reach a tool's facts through it, never by its
    name (tools/facts.py). A tool missing one, or naming one that does not exist, fails here."""

    name: str
    description: str
    input_model: type[BaseModel]
    permission: str
    handler: Handler
    output_model: type[BaseModel] | None = None
    # Each is required (None raises, as for `permission`); a string is read as its enum's value.
    grounding: Grounding = None  # type: ignore[assignment]
    drawer: Drawer = None  # type: ignore[assignment]
    offline_template: OfflineTemplate = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not self.permission or not isinstance(self.permission, str):
            raise ToolDefinitionError(f"tool {self.name!r} has no permission: every tool must name one")
        if not self.name or not self.description:
            raise ToolDefinitionError("a tool needs a name and a description")
        for fact, (kind, says) in _FACTS.items():
            # Frozen: the checked value replaces what was given (an enum member for its string).
            object.__setattr__(self, fact, self._fact(fact, kind, says))

    def _fact(self, fact: str, kind: type[_Fact], says: str) -> _Fact:
        value = getattr(self, fact)
        if value is None:
            raise ToolDefinitionError(f"tool {self.name!r} has no {fact} ({says}): every tool must name one "
                                      f"of {', '.join(kind)}")
        try:
            return kind(value)
        except ValueError:
            raise ToolDefinitionError(f"tool {self.name!r}: {fact} {value!r} is not one of {', '.join(kind)}") from None

    def spec(self) -> ToolSpec:
        return self._spec

    @cached_property
    def _spec(self) -> ToolSpec:
        # Built once per tool, not per exchange: a schema is the same for every caller and step.
        schema = compact_object(self.input_model.model_json_schema())
        return ToolSpec(name=self.name, description=self.description, input_schema=schema)


def define_tool(
    *,
    name: str,
    description: str,
    input_model: type[BaseModel],
    permission: str | None = None,
    output_model: type[BaseModel] | None = None,
    grounding: Grounding | str | None = None,
    drawer: Drawer | str | None = None,
    offline_template: OfflineTemplate | str | None = None,
) -> Callable[[Handler], Tool]:
    """Decorator form of `Tool(...)`; `permission` and the three facts are required (None raises
    at definition, and so does a value that is not one of its kind's)."""

    def wrap(handler: Handler) -> Tool:
        return Tool(
            name=name,
            description=description,
            input_model=input_model,
            permission=permission,  # type: ignore[arg-type]
            handler=handler,
            output_model=output_model,
            grounding=grounding,  # type: ignore[arg-type]
            drawer=drawer,  # type: ignore[arg-type]
            offline_template=offline_template,  # type: ignore[arg-type]
        )

    return wrap


class ToolRefused(Exception):
    """The caller may not use this tool (or it does not exist): refused at execution too."""


class Registry(Protocol):
    """What an answer runs its tools through: the deployment's registry, or a view of it for one
    question (tools/recall_tool.py's `GatedRegistry`)."""

    async def offered(self, caller: Caller) -> list[Tool]: ...

    def get(self, name: str) -> Tool | None: ...

    async def execute(self, name: str, args: JsonObject, ctx: ToolContext) -> JsonValue: ...


class ToolRegistry:
    def __init__(self, tools: list[Tool], can: Can | None) -> None:
        if tools and can is None:
            raise ToolDefinitionError("a registry with tools needs a `can(permission, caller)` check")
        names = [t.name for t in tools]
        if len(names) != len(set(names)):
            raise ToolDefinitionError(f"duplicate tool names: {names}")
        self._tools = {t.name: t for t in tools}
        self._can = can

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    async def offered(self, caller: Caller) -> list[Tool]:
        allowed = []
        for tool in self._tools.values():
            if await self._can(tool.permission, caller):  # type: ignore[misc]
                allowed.append(tool)
        return allowed

    async def execute(self, name: str, args: JsonObject, ctx: ToolContext) -> JsonValue:
        """Run one call. Raises ToolRefused, ToolError (bad input) or whatever the tool raises."""
        tool = self._tools.get(name)
        if tool is None or not await self._can(tool.permission, ctx.caller):  # type: ignore[misc]
            # The same answer for unknown and denied: the model learns nothing about other tools.
            raise ToolRefused(f"tool {name!r} is not available to this caller")
        try:
            parsed = tool.input_model.model_validate(args or {})
        except ValidationError as exc:
            raise ToolError(_validation_message(exc)) from exc
        result = await tool.handler(ctx, parsed)
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json")
        return result


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "invalid arguments: " + "; ".join(parts)
