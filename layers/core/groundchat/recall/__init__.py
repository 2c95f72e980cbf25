"""Recall: a person's own past exchanges as a source the model can search (`search_my_conversations`).

Indexed when an exchange commits (`index_exchange`), removed with its conversation (deleted, or
expired: `recall.sweep`), searched only under the caller's id. Locally a SQLite file beside the
corpus index; in AWS an OpenSearch index.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from groundchat.recall.entries import RecallEntry, RecallHit, conversation_link, make_entry
from groundchat.recall.plan import RECALL_MODES, RecallPlan, plan_recall

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.recall.index import RecallIndex
    from groundchat.search.embeddings import Embedder

log = logging.getLogger("groundchat.recall")


def recall_index_path(settings: "Settings") -> Path:
    return Path(settings.home) / "recall.sqlite"


def open_recall_index(settings: "Settings", embedder: Callable[[], Embedder]) -> RecallIndex:
    """The configured recall index; `embedder` is called once, on the first write or search."""
    from groundchat.search import backend_kind

    if backend_kind(settings) == "opensearch":
        from groundchat.recall.opensearch import OpenSearchRecallIndex
        from groundchat.search.opensearch import make_client

        return OpenSearchRecallIndex(make_client(settings), settings.recall_index, embedder,
                                     serverless=settings.opensearch_service == "aoss")
    from groundchat.recall.embedded import EmbeddedRecallIndex

    return EmbeddedRecallIndex(recall_index_path(settings), embedder)


def index_exchange(index: RecallIndex, owner: str, conversation_id: str, run_id: str, question: str, answer: str,
                   expires_at: int | None = None) -> bool:
    """Adds one committed exchange. Called only after its commit succeeded; a failure here is logged
    and never undoes the answer (the exchange is then simply not recallable). `expires_at`: the
    expiry that commit gave the conversation, so the sweep (`recall.sweep`) finds the entry when
    the conversation's day comes."""
    if not answer.strip():
        return False
    try:
        index.add(make_entry(owner, conversation_id, run_id, question, answer, expires_at))
    except Exception as exc:
        log.warning("recall index write failed: %s", type(exc).__name__)
        return False
    return True


__all__ = ["RECALL_MODES", "RecallEntry", "RecallHit", "RecallPlan", "conversation_link", "index_exchange",
           "open_recall_index", "plan_recall"]
