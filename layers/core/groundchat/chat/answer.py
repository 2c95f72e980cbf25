"""The answer use case: one question from one caller, checked, then composed into a run whose
frames the caller streams.

Every way a question is asked goes through `answer_question`: the chat route, the CLI's in-process
paths, the tests and the benchmarks. Three modules hold it, one idea each: the request, its body
and how it is read (chat/question_body.py); the checks before any model call, in their order
(chat/question_checks.py); and here, the composition: the tools this caller is offered, the system
prompt, the history the model will see, the first steps' reservation (the last check, 429), and
the run the loop drives. The conversation's claim is released on every path that ends before the
run starts; after that the run releases it, and any unused reservation, as it finishes.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, AsyncIterator

from groundchat.attachments.history_images import history_for_model
from groundchat.attachments.uploads import Uploads
from groundchat.auth.callers import Caller
from groundchat.chat.answer_run import LoopLimits, offered_specs
from groundchat.chat.follow import follow_answer
from groundchat.chat.freshness_note import SourceChecks, stale_source_note
from groundchat.chat.history import policy_for, shape_history
from groundchat.chat.loop import run_exchange
from groundchat.chat.opening import ConversationOpened, Repeat, release_claim
from groundchat.chat.prompts import system_prompt
from groundchat.chat.question_body import BodyParser, parse_body
from groundchat.chat.question_checks import Asking, Checked, check_question
from groundchat.chat.stored_run import RunStores, StoredRun
from groundchat.chat.summarise import Summariser
from groundchat.exchange.frames import DoneFrame, Frame
from groundchat.exchange.refusal import IssuedSession, Refusal
from groundchat.grounding.citations import citation_check
from groundchat.models.messages import Message, ModelRequest
from groundchat.public.gate import Visit
from groundchat.recall.hooks import RecallAccess
from groundchat.recall.plan import RecallPlan
from groundchat.services import Services
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.step_guard import SpendCapReached
from groundchat.store.history_summary import stored_summary
from groundchat.tools.recall_tool import GatedRegistry

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

__all__ = ["Answer", "Refusal", "answer_question"]


@dataclass
class Answer:
    conversation_id: str
    run_id: str
    frames: AsyncIterator[Frame]
    visitor_session: IssuedSession | None = None  # a visitor verified by this request: set the cookie
    caller_id: str = ""  # whose run it is (a visitor's id too): the trace is read back by it


async def answer_question(services: Services, caller: Caller | None, body: bytes | str | JsonObject,
                          visit: Visit | None = None, uploads: Uploads = (), *,
                          parse: BodyParser | None = None, client_chosen_id: bool = False,
                          request_key: str | None = None) -> Refusal | Answer:
    """A refusal, or the answer whose frames the caller streams (and must drain: the exchange
    commits and releases its claim as the frames run out). `visit`: what the HTTP request says
    about its sender, which public mode's rate limit and bot wall judge. `client_chosen_id`: the
    body's conversation id is one the client made up (a chat SDK names its chats), so an unused
    one opens a new conversation under that id; one in use by someone else is still a 404.
    `request_key`: the client's name for this request (an `Idempotency-Key`, the AI SDK's message
    id): a repeat of it follows the first answer instead of running another (chat/follow.py)."""
    checked = await check_question(services, Asking(caller, body, visit, uploads, parse or parse_body,
                                                    client_chosen_id, request_key))
    if isinstance(checked, Refusal):
        return checked
    conversation = checked.conversation
    if isinstance(conversation, Repeat):
        return Answer(conversation_id=conversation.conversation_id, run_id=conversation.run_id,
                      caller_id=checked.caller.id, visitor_session=checked.visitor_session,
                      frames=follow_answer(services, checked.caller.id, conversation.conversation_id, conversation.run_id))
    try:
        composed = await _composed(services, checked, conversation)
    except BaseException:
        # Whatever failed between the claim and the first frame must not leave it blocked.
        await release_claim(services, conversation, checked.run_id)
        raise
    if isinstance(composed, Refusal):
        await release_claim(services, conversation, checked.run_id)
        return replace(composed, visitor_session=checked.visitor_session)
    return Answer(conversation_id=conversation.id, run_id=checked.run_id, caller_id=checked.caller.id,
                  visitor_session=checked.visitor_session,
                  frames=_with_recall_plan(composed.shown_plan, run_exchange(composed)))


async def _composed(services: Services, checked: Checked, conversation: ConversationOpened) -> StoredRun | Refusal:
    """The run: what the model is sent (tools, system prompt, history, question) and the first
    steps' reservation; a 429 when the caps hold no room for them."""
    settings, caller, run_id, question = services.settings, checked.caller, checked.run_id, checked.question
    recall = await services.recall_plan(caller, question)  # offers the recall search, or not
    registry = GatedRegistry(services.registry, recall)
    access = RecallAccess(services.recall, recall, services.conversations) if recall.search else None
    ctx = services.tool_context(caller, run_id, conversation.id, recall=access)
    ctx.search = checked.body.search_preferences()  # what the request asked of its searches (they only narrow)
    offered = await offered_specs(registry, ctx)
    system = system_prompt(settings.bot_name, [t.name for t in offered])
    # Visitors get the short profile: few turns, oldest forgotten first, small cheap requests.
    profile = settings.visitor_history_profile if caller.is_visitor else settings.history_profile
    guard = BudgetGuard(services.dynamo, settings, caller.id, conversation.id, run_id, services.model.price_id,
                        public=caller.is_visitor)
    # Earlier images: sent again or as words, per profile and model (stamped with the model's bound).
    earlier = await history_for_model(conversation.history, services.model, profile, services.conversations.images)
    asked = Message(role="user", content=question, images=list(checked.images))
    try:
        # A summarising profile may call the model here: a step charged and capped like any other.
        shaped = await shape_history(earlier, asked, system, offered, policy_for(profile),
                                     summariser=_summariser(services, conversation, run_id, guard))
        if shaped.outcome != "failed":  # a request too large to send calls no model: nothing to reserve
            # 429 before any model call: the worst cases of the first step and of the answering
            # step are reserved now, together, against every cap, and kept for those steps.
            await guard.precheck(ModelRequest(system=system, messages=[*shaped.messages, asked],
                                              tools=offered, max_output_tokens=settings.max_output_tokens))
    except SpendCapReached as cap:
        return Refusal(429, cap.code, cap.message, {"scope": cap.scope, "resets_at": cap.resets_at})
    return StoredRun(
        model=services.model, system=system, registry=registry, offered=offered, ctx=ctx, question=asked,
        conversation_id=conversation.id, run_id=run_id, history=shaped.messages,
        # A first question whose history had nothing to shorten has nothing to say about it.
        shortening=shaped if earlier or shaped.outcome != "unchanged" else None,
        guard=guard, limits=LoopLimits(settings.max_steps, settings.max_output_tokens, settings.max_tool_result_chars),
        checks=[citation_check, stale_source_note(settings.stale_source_days, checks=_source_checks(services))],
        stores=_run_stores(services, recall), existing=conversation.existing, recall=recall,
    )


def _run_stores(services: Services, recall: RecallPlan) -> RunStores:
    return RunStores(dynamo=services.dynamo, conversations=services.conversations, answers=services.answers,
                     traces=services.traces, cleaners=services.deletion_cleaners(),
                     recall=services.recall if recall.indexes else None)


def _source_checks(services: Services) -> SourceChecks:
    """The ingest's checks of the normative texts' official sources, from the index the answer searched."""
    from groundchat.corpus.source_checks import SourceCheck, checked_sources
    from groundchat.search.index_meta import serving_meta

    def read() -> dict[str, SourceCheck]:
        return checked_sources(serving_meta(getattr(services.docs, "backend", None)))

    return read


def _summariser(services: Services, conversation: ConversationOpened, run_id: str, guard: BudgetGuard) -> Summariser:
    return Summariser(services.model, guard, services.dynamo, conversation.id, run_id,
                      stored_summary(conversation.existing), services.settings.bot_name, services.settings.max_output_tokens)


async def _with_recall_plan(plan: JsonObject, frames: AsyncIterator[Frame]) -> AsyncIterator[Frame]:
    """The frames, the `done` frame carrying the recall plan: the page's Details say whether past
    conversations were searched, and why, even when they were not."""
    async for frame in frames:
        yield frame.model_copy(update={"recall": plan}) if isinstance(frame, DoneFrame) else frame
