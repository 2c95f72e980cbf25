"""What one request asks of its searches, stated once: the excerpt count and the leg switches
(`SearchSwitches`, which the chat's body `ChatBody` inherits as they are) and the sources
(`SearchPreferences`, which the chat's tools and the search pipeline read).

They only narrow what the deployment does: `sources` is a subset of the corpus's sources, `top_k`
is at most the search's own ceiling (GROUNDCHAT_SEARCH_MAX_EXCERPTS), and a switch can turn a leg
off, never on where the deployment has it off. The search's debug record says which legs ran and
over which sources (search/debug.py).
"""
from __future__ import annotations

from typing import Literal, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator
from pydantic_core import PydanticCustomError

Source = Literal["wcag22", "eaa", "docs"]
SWITCHES = ("include_vector", "include_sparse", "include_graph")


class LegsOff(TypedDict, total=False):
    """The legs a request turned off, as `SearchService.search` takes them."""

    include_vector: bool
    include_sparse: bool
    include_graph: bool


class SourceNotAllowed(ValueError):
    """The model asked for a source this request left out."""


class SearchSwitches(BaseModel):
    """How many excerpts a search serves and which of its legs may run. Strict, as a JSON body reads
    them: "false" is not false and true is not 1."""

    model_config = ConfigDict(extra="forbid")
    top_k: int | None = Field(default=None, ge=1, description="excerpts per search, at most this deployment's ceiling")
    # The vector leg, and the question bank's rows, which need the query's vector.
    include_vector: StrictBool = True
    include_sparse: StrictBool = True  # the BM25 leg
    # The graph leg (search/graph_leg.py), in hybrid searches only and as GROUNDCHAT_SEARCH_GRAPH says.
    include_graph: StrictBool = True

    @field_validator("top_k", mode="before")
    @classmethod
    def _a_count_is_a_json_number(cls, value: object) -> object:
        # JSON's integer (3, or 3.0 as JSON Schema allows), never a boolean or a string of digits.
        if isinstance(value, (bool, str)):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    def switches(self) -> dict[str, bool]:
        return {name: bool(getattr(self, name)) for name in SWITCHES}

    def switched_off(self) -> LegsOff:
        """Only the legs turned off, as the search's keyword arguments: a leg left on keeps the
        deployment's own choice for it."""
        return cast(LegsOff, {name: False for name in SWITCHES if not getattr(self, name)})


class SearchPreferences(SearchSwitches):
    """One request's or one search's preferences. Within a search (search/pipeline.py)
    `include_graph` is already resolved against the deployment's default: true means the graph
    leg runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sources: tuple[Source, ...] | None = None

    def sources_for(self, asked: str | None) -> list[str] | None:
        """The sources one search runs over: the one the model asked for, within the request's."""
        if self.sources is None:
            return [asked] if asked else None
        if asked is None:
            return list(self.sources)
        if asked not in self.sources:
            raise SourceNotAllowed(f"this request searches only {', '.join(self.sources)}, not {asked}: "
                                   f"search one of those, or without a source")
        return [asked]


__all__ = ["SWITCHES", "SearchPreferences", "SearchSwitches", "Source", "SourceNotAllowed"]
