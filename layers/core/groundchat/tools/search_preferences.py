"""What one chat request asks of the searches its answer runs: the JSON API's `sources`, `top_k`
and `include_vector` / `include_sparse` / `include_graph` (chat/answer.py's `ChatBody`).

They only narrow what the deployment does: `sources` is a subset of the corpus's sources, `top_k`
is at most the search's own ceiling (GROUNDCHAT_SEARCH_MAX_EXCERPTS), and a switch can turn a leg
off, never on where the deployment has it off. The search's debug record says which legs ran and
over which sources.
"""
from __future__ import annotations

from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

Source = Literal["wcag22", "eaa", "docs"]


class LegsOff(TypedDict, total=False):
    """The legs a request turned off, as `SearchService.search`'s keyword arguments."""

    include_vector: bool
    include_sparse: bool
    include_graph: bool


class SourceNotAllowed(ValueError):
    """The model asked for a source this request left out."""


class SearchPreferences(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    sources: tuple[Source, ...] | None = None
    top_k: int | None = Field(default=None, ge=1)
    include_vector: bool = True
    include_sparse: bool = True
    include_graph: bool = True

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

    def switched_off(self) -> LegsOff:
        """Only the legs turned off, as the search's keyword arguments: a leg left on keeps the
        deployment's own choice for it."""
        off: LegsOff = {}
        if not self.include_vector:
            off["include_vector"] = False
        if not self.include_sparse:
            off["include_sparse"] = False
        if not self.include_graph:
            off["include_graph"] = False
        return off
