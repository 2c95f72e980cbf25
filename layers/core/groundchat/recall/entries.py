"""One recall entry: a committed exchange (the question and its answer) of one person."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

# What one entry keeps of an answer: enough to find and quote it, not the whole essay.
MAX_ANSWER_CHARS = 4000
MAX_QUESTION_CHARS = 2000


def conversation_link(conversation_id: str) -> str:
    """Where the chat page opens a conversation by address."""
    return f"/chat?conversation={conversation_id}"


@dataclass(frozen=True)
class RecallEntry:
    owner: str
    conversation_id: str
    run_id: str
    question: str
    answer: str
    created_at: float = field(default_factory=time.time)
    # When the sweep must look at this entry again (epoch seconds): its conversation's expiry as
    # the commit that made the entry wrote it. None for entries indexed before expiries were kept.
    expires_at: int | None = None

    @property
    def id(self) -> str:
        return hashlib.sha256(f"{self.owner}\x00{self.conversation_id}\x00{self.run_id}".encode()).hexdigest()

    @property
    def ref(self) -> str:
        # Eight hex digits like a corpus excerpt's ref, so the citation check verifies it the same way.
        return self.id[:8]

    def text(self) -> str:
        """What is embedded and matched: the question, then the answer."""
        return f"{self.question}\n{self.answer}"


def make_entry(owner: str, conversation_id: str, run_id: str, question: str, answer: str,
               expires_at: int | None = None) -> RecallEntry:
    if not owner or not conversation_id or not run_id:
        raise ValueError("a recall entry needs an owner, a conversation id and a run id")
    return RecallEntry(owner, conversation_id, run_id, question.strip()[:MAX_QUESTION_CHARS],
                       answer.strip()[:MAX_ANSWER_CHARS], expires_at=expires_at)


@dataclass(frozen=True)
class RecallHit:
    entry: RecallEntry
    score: float

    def public(self, max_chars: int = 600) -> JsonObject:
        """A citable excerpt: `ref` for [ref], `url` to open the conversation."""
        e = self.entry
        answer = e.answer if len(e.answer) <= max_chars else e.answer[:max_chars].rsplit(" ", 1)[0] + " …"
        return {"ref": e.ref, "source": "conversation", "section": e.conversation_id, "title": e.question[:200],
                "url": conversation_link(e.conversation_id), "text": answer,
                "asked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.created_at))}
