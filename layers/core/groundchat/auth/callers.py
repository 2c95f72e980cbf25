"""Who is asking, and the one question every route and tool asks about them."""
from __future__ import annotations

from typing import Awaitable, Callable, Literal

from pydantic import BaseModel

# Permissions. `chat.use` is the allowlist; the rest guard the data each route or tool reads.
CHAT_USE = "chat.use"
RUNS_READ = "runs.read"
DOCS_READ = "docs.read"
VIEWS_SHOW = "views.show"
TRACES_READ = "traces.read"
# Searching one's own past conversations (never a visitor's: their conversations are not kept).
RECALL_READ = "recall.read"
ALL_PERMISSIONS = (CHAT_USE, RUNS_READ, DOCS_READ, VIEWS_SHOW, TRACES_READ, RECALL_READ)


class Caller(BaseModel):
    """Resolved server-side from a verified token (or, in public mode, a verified visitor session);
    never taken from a request body."""

    id: str
    # "person": grants from the store. "visitor": an anonymous visitor of a public chat, whose
    # permissions are the configured visitor set (groundchat.public.visitors).
    kind: Literal["person", "visitor"] = "person"

    @property
    def is_visitor(self) -> bool:
        return self.kind == "visitor"


Can = Callable[[str, Caller], Awaitable[bool]]

# What every route says to a request without a verified caller.
SIGN_IN_MESSAGE = "Sign in: send a bearer token (locally: `groundchat token USER`)."
