"""Composition: builds the stores, tools, model and checks one deployment uses.

Framework-free: the chat function, the share function and the CLI all build from here, so the
local default differs from AWS by configuration only.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from groundchat.auth.tokens import TokenVerifier
from groundchat.auth.callers import Caller
from groundchat.config import Settings, get_settings
from groundchat.store.answers_in_progress import AnswersInProgress
from groundchat.store.conversations import ConversationStore
from groundchat.store.dynamo import Dynamo
from groundchat.store.feedback import FeedbackStore
from groundchat.store.traces import TraceStore
from groundchat.store.users import UserStore
from groundchat.lazy import Lazy
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from groundchat.models.messages import ChatModel

if TYPE_CHECKING:  # built on first use: the share function builds these services and never loads recall or search
    from groundchat.benchmark.axe_rules import RuleTable
    from groundchat.public.gate import PublicGate
    from groundchat.recall.hooks import RecallAccess
    from groundchat.recall.index import RecallIndex
    from groundchat.recall.plan import RecallPlan
    from groundchat.search.service import SearchService
    from groundchat.store.deletion_jobs import Cleaners
    from groundchat.store.runs import RunsStore


@dataclass
class Services:
    settings: Settings
    dynamo: Dynamo
    # Injected in tests; built from settings otherwise.
    model_override: ChatModel | None = None
    tools_override: list[Tool] | None = None
    docs_override: SearchService | None = None
    recall_override: RecallIndex | None = None

    @cached_property
    def users(self) -> UserStore:
        return UserStore(self.dynamo)

    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore(self.dynamo)

    @cached_property
    def traces(self) -> TraceStore:
        return TraceStore(self.dynamo)

    @cached_property
    def answers(self) -> AnswersInProgress:
        return AnswersInProgress(self.dynamo)

    @cached_property
    def feedback(self) -> FeedbackStore:
        return FeedbackStore(self.dynamo)

    @cached_property
    def verifier(self) -> TokenVerifier:
        return TokenVerifier(self.settings)

    async def can(self, permission: str, caller: Caller) -> bool:
        if caller.is_visitor:
            # A visitor's permissions are configured, never read from the grants table.
            from groundchat.public.visitors import visitor_may

            return visitor_may(permission, self.settings.visitor_permissions)
        return await self.users.can(permission, caller)

    @property
    def public(self) -> bool:
        return self.settings.mode == "public"

    @cached_property
    def public_gate(self) -> PublicGate:
        """Public mode's rate limit and bot wall (groundchat.public.gate); tests may replace it."""
        from groundchat.public.bot_wall import TurnstileVerifier
        from groundchat.public.gate import PublicGate
        from groundchat.public.rate_limit import SlidingWindowLimiter
        from groundchat.store.rate_limits import RateLimitStore

        s = self.settings
        limiter = SlidingWindowLimiter(RateLimitStore(self.dynamo), s.visitor_rate_limit, s.visitor_rate_window_seconds)
        return PublicGate(s, limiter, TurnstileVerifier(s.turnstile_secret, s.turnstile_verify_url, s.turnstile_timeout_seconds))

    @cached_property
    def registry(self) -> ToolRegistry:
        if self.tools_override is not None:
            tools = self.tools_override
        else:
            from groundchat.tools.catalog import all_tools

            tools = all_tools()
        return ToolRegistry(tools, self.can)

    @cached_property
    def model(self) -> ChatModel:
        if self.model_override is not None:
            return self.model_override
        from groundchat.models.adapters import build_model, parse_model_setting

        if parse_model_setting(self.settings.model)[0] == "offline":
            # Imported here: the offline answerer pulls in the tools, search and recall it answers with.
            from groundchat.offline.answerer import OfflineAnswerer

            return OfflineAnswerer(self.settings, facets=lambda: self.runs.facets(),
                                   nearness=lambda question: self.docs.nearness(question))
        return build_model(self.settings)

    def answerer_notice(self) -> str | None:
        """What the offline answerer says of itself before the first question, when it is the model
        answering here (offline/notice.py); None for any other model."""
        from groundchat.offline.notice import OFFLINE_NOTICE, answerer_notice

        if self.model_override is not None:
            return OFFLINE_NOTICE if getattr(self.model_override, "model_id", None) == "offline" else None
        return answerer_notice(self.settings)

    async def store_reachable(self) -> bool:
        """One cheap read: can this deployment reach its DynamoDB at all?"""
        try:
            await self.dynamo.run(self.dynamo.client.list_tables, Limit=1)
        except Exception:
            return False
        return True

    def model_status(self) -> tuple[bool, str, str]:
        """(enabled, reason, how to fix) without calling any model."""
        if self.model_override is not None:
            return True, "configured", ""
        from groundchat.models.adapters import model_status, parse_model_setting
        from groundchat.spending.prices import PricingError, price_for

        status = model_status(self.settings)
        if not status.enabled or parse_model_setting(self.settings.model)[0] == "offline":
            return status
        # A model whose spending cannot be capped is not offered, however well it is configured.
        try:
            price_for(self.settings.model, self.settings)
        except PricingError as exc:
            return False, f"{self.settings.model} has no usable price, so its spending cannot be capped.", str(exc)
        return status

    @cached_property
    def runs(self) -> RunsStore:
        from groundchat.store.runs import RunsStore

        return RunsStore(self.dynamo)

    @cached_property
    def docs(self) -> SearchService:
        if self.docs_override is not None:
            return self.docs_override
        from groundchat.search import open_default_search

        return open_default_search(self.settings)

    @cached_property
    def recall(self) -> RecallIndex:
        """The recall index (past exchanges by owner); its embedding model loads on first use."""
        if self.recall_override is not None:
            return self.recall_override
        from groundchat.recall import open_recall_index
        from groundchat.search.embeddings import make_embedder

        s = self.settings
        return open_recall_index(s, lambda: make_embedder(s.embedding_model, region=s.aws_region))

    def deletion_cleaners(self) -> Cleaners:
        """What a deletion job removes outside DynamoDB: the images and the recall entries."""
        from groundchat.store.deletion_jobs import Cleaners

        return Cleaners(remove_images=self.conversations.delete_images, remove_recall=self.remove_recall)

    async def remove_recall(self, owner: str, conversation_id: str) -> int:
        """A deleted conversation's recall entries go with it (store/deletion.py calls this)."""
        import asyncio

        return await asyncio.to_thread(self.recall.remove_conversation, owner, conversation_id)

    async def recall_plan(self, caller: Caller, question: str) -> RecallPlan:
        """Whether this question may search the caller's past conversations (groundchat.recall.plan)."""
        from groundchat.auth.callers import RECALL_READ
        from groundchat.recall.plan import plan_recall

        return plan_recall(question, self.settings.recall, permitted=await self.can(RECALL_READ, caller))

    @cached_property
    def rules(self) -> RuleTable:
        from groundchat.benchmark.axe_rules import load_rules

        return load_rules()

    def tool_context(self, caller: Caller, run_id: str = "", conversation_id: str = "",
                     recall: RecallAccess | None = None) -> ToolContext:
        """What a tool may reach for this caller. Every search is charged here, whoever runs the
        tool (an answer, a page route, `groundchat tool`), under this run. `recall`: the caller's
        past conversations, given only when this question's recall plan searches them."""
        from groundchat.spending.search_charge import SearchCharge

        run_id = run_id or uuid.uuid4().hex
        return ToolContext(
            caller=caller,
            run_id=run_id,
            conversation_id=conversation_id,
            runs=Lazy(lambda: self.runs),
            docs=Lazy(lambda: self.docs),
            rules=Lazy(lambda: self.rules),
            recall=recall,
            charge_search=SearchCharge(self.dynamo, self.settings, caller.id, conversation_id, run_id, public=caller.is_visitor),
        )


def build_services(settings: Settings | None = None, **overrides: Any) -> Services:
    settings = settings or get_settings()
    return Services(settings=settings, dynamo=Dynamo(settings), **overrides)
