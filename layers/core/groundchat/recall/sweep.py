"""The recall sweep: entries of conversations that have expired or gone leave the recall index.

Deleting a conversation removes its entries at once (`store/deletion.py`). A conversation that ends
by retention is removed by DynamoDB's TTL (locally by `store.retention.expire_due`), which never
reaches the recall index; this sweep does, on the same schedule as the reservations' sweep.

Each entry carries the expiry its conversation had when the entry was committed. A conversation's
expiry only moves at a commit, and that commit's entry carries the new one, so the entry with the
latest expiry of a conversation is due exactly when the conversation is. The sweep asks the index
for entries that are due (a range query on the expiry: it never reads every entry), then reads those
conversations (BatchGetItem) before it acts, because an older entry falls due while its
conversation lives on:
- gone, expired, or owned by someone else: every entry of that conversation is removed;
- alive: its entries move forward to the conversation's expiry, to be looked at again then.
Every due entry is thus settled in one round, so rounds make progress, and a second sweep at the
same time finds nothing: the sweep is idempotent. Entries indexed before expiries were kept carry
none; they count as due, and the first sweep settles them the same way.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, NoReturn

from groundchat.store.item_values import whole
from groundchat.store.retention import DAY, is_expired

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.recall.index import RecallIndex
    from groundchat.store.items import StoredItem

# Conversations settled per round: one BatchGetItem (100 keys at most) and one request of each kind
# to the index. A sweep stops after MAX_ROUNDS; a larger backlog is the next sweep's (15 min later).
BATCH = 100
MAX_ROUNDS = 50

# Owner and expiry of the conversations that still have an item, by id (`conversation_expiries_sync`).
ReadConversations = Callable[[list[str]], "dict[str, StoredItem]"]


@dataclass
class RecallSwept:
    removed: int = 0  # entries removed
    conversations_removed: int = 0
    renewed: int = 0  # entries of live conversations moved to their conversation's expiry
    checked: int = 0  # conversations looked at
    backlog: bool = False  # stopped at MAX_ROUNDS (or without progress) with entries still due

    def public(self) -> dict[str, int | bool]:
        return asdict(self)


def sweep_recall(index: RecallIndex, read_conversations: ReadConversations, now: float, *, batch: int = BATCH,
                 max_rounds: int = MAX_ROUNDS) -> RecallSwept:
    swept = RecallSwept()
    cutoff = int(now)
    previous: list[tuple[str, str]] | None = None
    for _ in range(max_rounds):
        due = index.due_conversations(cutoff, batch)
        if not due:
            return swept
        if due == previous:  # the last round changed nothing (an index that refused the writes)
            swept.backlog = True
            return swept
        previous = due
        found = read_conversations(sorted({conversation_id for _, conversation_id in due}))
        gone: list[tuple[str, str]] = []
        live: dict[tuple[str, str], int] = {}
        for owner, conversation_id in due:
            item = found.get(conversation_id)
            if item is None or item.get("owner") != owner or is_expired(item, cutoff):
                gone.append((owner, conversation_id))
            else:
                # A conversation with no expiry (kept from before retention) is looked at again tomorrow.
                live[(owner, conversation_id)] = whole(item, "expires_at") if item.get("expires_at") is not None else cutoff + DAY
        swept.checked += len(due)
        if gone:
            swept.removed += index.remove_conversations(gone)
            swept.conversations_removed += len(gone)
        if live:
            swept.renewed += index.renew(live)
    swept.backlog = bool(index.due_conversations(cutoff, 1))
    return swept


def _never_embeds() -> NoReturn:
    raise RuntimeError("the recall sweep reads keys and expiries only: it never embeds")


def open_for_sweep(settings: Settings) -> RecallIndex | None:
    """The configured recall index, opened without an embedding model; None when there is nothing
    to sweep (locally, no recall file yet: one is not created just to be swept)."""
    from groundchat.recall import open_recall_index, recall_index_path
    from groundchat.search import backend_kind

    if backend_kind(settings) != "opensearch" and not recall_index_path(settings).exists():
        return None
    return open_recall_index(settings, _never_embeds)
