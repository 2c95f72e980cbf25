"""The search as a client gets it from a running app: `search_docs` over its `/mcp` door.

`groundchat eval retrieval --url` measures through this, so the figures are those of the functions
that serve (`make run`, `make run-lambda`'s packaged functions, a deployment), not of this
process's own copy of the search. Each question is one `tools/call` of the MCP SDK's own client,
signed in as the user `groundchat try` signs in as; the excerpt count and the legs a question
switches off travel in the call's `_meta` (groundchat/mcp/search_meta.py), as a host asks them.
A search that could not run, or a call the app refused, stops the measurement with the app's
reason: a figure from searches that did not run would be no figure.
"""
from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal
    from mcp import ClientSession

TOOL = "search_docs"
SEARCH_META = "groundchat/search"  # the key groundchat.mcp.search_meta reads
TIMEOUT_S = 120.0


class RemoteSearchFailed(RuntimeError):
    """The app could not run a search, or refused it: the message says which and why."""


@dataclass(frozen=True)
class Excerpt:
    source: str
    section: str
    ref: str


@dataclass(frozen=True)
class Searched:
    """What one search gave the client: its outcome and its excerpts, in the app's order."""
    outcome: str
    passages: list[Excerpt] = field(default_factory=list)


def narrowing(k: int | None, include_vector: bool, include_sparse: bool, include_graph: bool | None) -> dict[str, Any]:
    """The call's `_meta` narrowing: only what differs from the deployment's own search."""
    asked: dict[str, Any] = {}
    if k is not None:
        asked["top_k"] = k
    for name, on in (("include_vector", include_vector), ("include_sparse", include_sparse),
                     ("include_graph", include_graph)):
        if on is False:  # a switch only turns a leg off; True or None keeps the deployment's choice
            asked[name] = False
    return asked


def searched(result: Any) -> Searched:
    """A `tools/call` result of search_docs as the client reads it."""
    text = " ".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        raise RemoteSearchFailed(f"the app refused the search: {text}")
    found = result.structured_content
    if not isinstance(found, dict) or "outcome" not in found:
        raise RemoteSearchFailed(f"search_docs gave no structured result: {text[:300]}")
    if found["outcome"] == "unavailable":
        raise RemoteSearchFailed(f"the app's search could not run: {found.get('reason')}")
    return Searched(outcome=found["outcome"],
                    passages=[Excerpt(e["source"], e["section"], e["ref"]) for e in found.get("excerpts", [])])


class McpSearch:
    """A search with the in-process service's call shape (`search(query, k=…, leg=…)`) that asks
    the app at `url`; use it as a context manager (one MCP session for every question)."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._portal: BlockingPortal | None = None
        self._portal_cm: Any = None
        self._session_cm: Any = None
        self._session: ClientSession | None = None

    def __enter__(self) -> McpSearch:
        from anyio.from_thread import start_blocking_portal

        # The SDK's client is async; the evaluation asks one question after another.
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._session_cm = self._portal.wrap_async_context_manager(self._opened())
            self._session = self._session_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._session_cm is not None:
                self._session_cm.__exit__(*exc)
        finally:
            self._portal_cm.__exit__(None, None, None)

    @asynccontextmanager
    async def _opened(self) -> AsyncIterator[ClientSession]:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {self._token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT_S) as http:
            async with streamable_http_client(f"{self.url}/mcp", http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session

    def search(self, query: str, *, k: int | None = None, sources: list[str] | None = None, leg: str = "hybrid",
               include_vector: bool = True, include_sparse: bool = True, include_graph: bool | None = None) -> Searched:
        if leg != "hybrid":
            raise ValueError(f"through an app only its own search runs (hybrid), not the {leg} leg alone")
        if sources and len(sources) > 1:
            raise ValueError("search_docs searches one source or all of them")
        assert self._portal is not None and self._session is not None, "McpSearch is used inside `with`"
        args: dict[str, Any] = {"query": query, **({"source": sources[0]} if sources else {})}
        meta = narrowing(k, include_vector, include_sparse, include_graph)
        result = self._portal.call(self._call, args, {SEARCH_META: meta} if meta else None)
        return searched(result)

    async def _call(self, args: dict[str, Any], meta: dict[str, Any] | None) -> Any:
        assert self._session is not None
        return await self._session.call_tool(TOOL, args, meta=meta)
