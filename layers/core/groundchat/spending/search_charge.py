"""What one search costs, charged against both caps before it runs.

Every caller of `search_docs` is charged here the same way: an answer (one charge per search it
makes, under its run), `groundchat tool search_docs`, and any route that runs the tool.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from groundchat.spending.caps import caps_for, refuse_oversized, timestamp
from groundchat.spending.pooled_hold import hold_within_caps
from groundchat.money import money_text
from groundchat.spending.prices import EMBEDDING_MAX_INPUT_TOKENS, price_for, rerank_price, search_cost
from groundchat.spending.token_estimate import estimate_tokens
from groundchat.store.tables import USAGE
from groundchat.store import usage as us

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.spending.budget_guard import BudgetGuard
    from groundchat.json_shapes import JsonObject
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import TransactAction


@dataclass(frozen=True)
class SearchCharge:
    """Charges the searches of one run (one caller and conversation)."""

    dynamo: Dynamo
    settings: Settings
    caller_id: str
    conversation_id: str
    run_id: str
    clock: Callable[[], float] = time.time
    public: bool = False  # an anonymous visitor: the visitors' ceiling counts too

    @classmethod
    def of_run(cls, guard: BudgetGuard) -> SearchCharge:
        """The searches of the run `guard` reserves the model steps of (its caller, conversation, caps)."""
        return cls(guard.dynamo, guard.settings, guard.caller_id, guard.conversation_id, guard.run_id, guard.clock,
                   guard.public)

    async def __call__(self, query: str | None = None, *, embedding_tokens: int | None = None) -> JsonObject:
        """Charge one search (its embedding plus its rerank, priced per model) before it runs.

        A search's cost is known before it runs (the query is at most one embedding request), so
        the reservation and the charge are the same conditional transaction: both caps are
        checked and the amount goes straight to `spent`, with the usage row. Without the query
        the embedding is charged at its largest possible size.
        """
        embedding_model = getattr(self.settings, "embedding_model", "local:minilm-int8")
        embedding_price = price_for(embedding_model, self.settings)
        if embedding_tokens is None:
            embedding_tokens = estimate_tokens(query) if query else EMBEDDING_MAX_INPUT_TOKENS
        # A rerank model without a price is refused here, before the search calls anything.
        rerank = rerank_price(str(getattr(self.settings, "rerank", "none") or "none"), self.settings)
        amount = search_cost(embedding_price, embedding_tokens, rerank=rerank)
        now, created_at = timestamp(self.clock)
        caps = caps_for(self.settings, self.caller_id, now, public=self.public)
        refuse_oversized(caps, amount)
        charge_id = uuid.uuid4().hex
        usage_table = self.dynamo.name(USAGE)

        def row(counters: list[tuple[str, str]]) -> list[TransactAction]:
            return [us.put_usage_op(usage_table, us.usage_item(us.UsageRow(
                run_id=self.run_id,
                entry=us.entry_key(created_at, charge_id),
                created_at=created_at,
                conversation_id=self.conversation_id,
                caller=self.caller_id,
                model=embedding_model,
                kind=us.KIND_SEARCH,
                charged=amount,
                our_cost=amount,
                reserved=amount,
                provider_cost=None,
                provider_cost_trusted=embedding_price.trust_provider_cost,
                measured=True,
                counters=counters,
                input_tokens=embedding_tokens,
            )))]

        await hold_within_caps(self.dynamo, self.settings, caps, amount, into="spent", rest=row)
        return {"charged": money_text(amount), "embedding_tokens": embedding_tokens, "charge_id": charge_id}
