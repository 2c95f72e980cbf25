"""The answer use case: one question from one caller, checked in order, then answered as frames.

Every way a question is asked goes through `answer_question`: the chat route, the CLI's in-process
paths, the tests and the benchmarks. The checks run before any model call, in this order:
503 (no model, or an unpriced one), 401, 403, 400, 404, 409, 429. In public mode the caller checks
become the public gate's (groundchat.public.gate): 503, 429 (rate limit), 401/403 (signed-in
grants, or the bot wall: 401 no check, 403 not human, 503 verifier unavailable), 400, 404, 409,
429 (caps, the visitors' ceiling among them). Then the claim on the
conversation, the history the model will see, the first step's reservation, the loop, the commit,
the trace and the metrics; the claim and any unused reservation are released on every exit path.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, AsyncIterator, Callable

from groundchat.attachments.history_images import history_for_model
from groundchat.attachments.question import prepare_question_images
from groundchat.attachments.uploads import ImagesRefused, UploadProblem, Uploads
from groundchat.auth.callers import CHAT_USE, SIGN_IN_MESSAGE, Caller
from groundchat.chat.answer_run import LoopLimits, offered_specs
from groundchat.chat.freshness_note import SourceChecks, stale_source_note
from groundchat.chat.history import policy_for, shape_history
from groundchat.chat.loop import run_exchange
from groundchat.chat.prompts import system_prompt
from groundchat.chat.stored_run import ConversationOpened, StoredRun
from groundchat.chat.summarise import Summariser
from groundchat.exchange.frames import DoneFrame, Frame
from groundchat.exchange.refusal import IssuedSession, Refusal
from groundchat.grounding.citations import citation_check
from groundchat.models.messages import ImageRef, Message, ModelRequest
from groundchat.chat.question_body import BodyLimits, ChatBody, body_limits, parse_body
from groundchat.public.gate import Visit
from groundchat.recall.hooks import RecallAccess
from groundchat.tools.search_preferences import SearchPreferences
from groundchat.services import Services
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.step_guard import SpendCapReached
from groundchat.spending.prices import PricingError, price_for
from groundchat.chat.follow import follow_answer
from groundchat.chat.opening import Opening, Repeat, open_conversation, release_claim
from groundchat.chat.request_keys import hashed_key, request_key_problem
from groundchat.store.conversations import new_conversation_id
from groundchat.store.history_summary import stored_summary
from groundchat.tools.recall_tool import GatedRegistry

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


@dataclass
class Answer:
    conversation_id: str
    run_id: str
    frames: AsyncIterator[Frame]
    visitor_session: IssuedSession | None = None  # a visitor verified by this request: set the cookie
    caller_id: str = ""  # whose run it is (a visitor's id too): the trace is read back by it


# How a route's body becomes a question: `parse_body` for ours; a client protocol's reader for its own
# body (chat_function/ai_sdk_body.py), run at the same place in the order of checks (400).
BodyParser = Callable[["bytes | str | JsonObject", BodyLimits], "ChatBody | Refusal"]


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
    problem = request_key_problem(request_key)
    if problem:
        return Refusal(400, "bad-request", problem)
    asked = _Asked(parse or parse_body, client_chosen_id, hashed_key(request_key))
    refused = _configuration_problem(services)
    if refused:
        return refused
    if not services.public:
        refused = await _caller_problem(services, caller)
        if refused:
            return refused
        assert caller is not None
        return await _answer_caller(services, caller, body, uploads, asked)
    admitted = await services.public_gate.admit(caller, visit, services.can)
    if isinstance(admitted, Refusal):
        return admitted
    outcome = await _answer_caller(services, admitted.caller, body, uploads, asked)
    # The human check passed and its token is spent: whatever follows, the visitor keeps the session.
    return replace(outcome, visitor_session=admitted.new_session) if admitted.new_session else outcome


@dataclass(frozen=True)
class _Asked:
    """How this route's body is read, and whose ids it names."""

    parse: BodyParser
    client_chosen_id: bool
    request_key: str | None = None  # hashed (hashed_key)


async def _answer_caller(services: Services, caller: Caller, body: bytes | str | JsonObject,
                         uploads: Uploads, asked: _Asked) -> Refusal | Answer:
    """From the body on: 400, 404, 409, 429 (caps), then the answer."""
    if isinstance(uploads, UploadProblem):  # a multipart body that cannot be read as a question
        return Refusal(400, "bad-request", uploads.message)
    parsed = asked.parse(body, body_limits(services.settings))
    if isinstance(parsed, Refusal):
        return parsed
    images = await _question_images(services, uploads)  # 400 for a bad file or a model without a bound
    if isinstance(images, Refusal):
        return images
    question = parsed.message.strip()
    run_id = uuid.uuid4().hex
    conversation_id, client_chosen = parsed.conversation_id, asked.client_chosen_id
    if conversation_id is None and asked.request_key:
        # A keyed first question: its key names the new conversation for the key's window, so a
        # repeat finds the answer it repeats.
        conversation_id = await services.answers.conversation_for_key(caller.id, asked.request_key, new_conversation_id())
        client_chosen = True
    conversation = await open_conversation(services, caller, Opening(conversation_id, run_id, question, client_chosen,
                                                                       asked.request_key))
    if isinstance(conversation, Refusal):
        return conversation
    if isinstance(conversation, Repeat):
        return Answer(conversation_id=conversation.conversation_id, run_id=conversation.run_id, caller_id=caller.id,
                      frames=follow_answer(services, caller.id, conversation.conversation_id, conversation.run_id))
    try:
        prepared = await _prepare(services, caller, conversation, question, run_id, images, parsed.search_preferences())
    except BaseException:
        # Whatever failed between the claim and the first frame must not leave it blocked.
        await release_claim(services, conversation, run_id)
        raise
    if isinstance(prepared, Refusal):
        await release_claim(services, conversation, run_id)
    return prepared


async def _prepare(services: Services, caller: Caller, conversation: ConversationOpened, question: str, run_id: str,
                   images: list[ImageRef] = (), search: SearchPreferences | None = None) -> Refusal | Answer:
    """The run: what the model is sent (tools, history, question) and step 0's reservation; then
    the answer, not yet started."""
    recall = await services.recall_plan(caller, question)  # offers the recall search, or not
    registry = GatedRegistry(services.registry, recall)
    access = RecallAccess(services.recall, recall, services.conversations) if recall.search else None
    ctx = services.tool_context(caller, run_id, conversation.id, recall=access)
    if search is not None:
        ctx.search = search  # what the request asked of its searches (they only narrow)
    offered = await offered_specs(registry, ctx)
    system = system_prompt(services.settings.bot_name, [t.name for t in offered])
    settings = services.settings
    # Visitors get the short profile: few turns, oldest forgotten first, small cheap requests.
    profile = settings.visitor_history_profile if caller.is_visitor else settings.history_profile
    spend = BudgetGuard(services.dynamo, settings, caller.id, conversation.id, run_id, services.model.price_id,
                        public=caller.is_visitor)
    # Earlier images: sent again or as words, per profile and model (stamped with the model's bound).
    conversation.history = await history_for_model(conversation.history, services.model, profile, services.conversations.images)
    asked = Message(role="user", content=question, images=list(images))
    try:
        # A summarising profile may call the model here: a step charged and capped like any other.
        shaped = await shape_history(conversation.history, asked, system, offered,
                                     policy_for(profile), summariser=_summariser(services, conversation, run_id, spend))
        if shaped.outcome != "failed":  # a request too large to send calls no model: nothing to reserve
            # 429 before any model call: the worst cases of the first step and of the answering
            # step are reserved now, together, against every cap, and kept for those steps.
            await spend.precheck(ModelRequest(system=system, messages=[*shaped.messages, asked],
                                              tools=offered, max_output_tokens=settings.max_output_tokens))
    except SpendCapReached as cap:
        return Refusal(429, cap.code, cap.message, {"scope": cap.scope, "resets_at": cap.resets_at})
    run = StoredRun(
        model=services.model, system=system, registry=registry, offered=offered, ctx=ctx, question=asked,
        conversation_id=conversation.id, run_id=run_id, history=shaped.messages,
        # A first question whose history had nothing to shorten has nothing to say about it.
        shortening=shaped if conversation.history or shaped.outcome != "unchanged" else None,
        guard=spend, limits=LoopLimits(settings.max_steps, settings.max_output_tokens, settings.max_tool_result_chars),
        checks=[citation_check, stale_source_note(settings.stale_source_days, checks=_source_checks(services))],
        services=services, caller=caller, conversation=conversation, recall=recall, spend=spend,
    )
    frames = _with_recall_plan(run.shown_plan, run_exchange(run))
    return Answer(conversation_id=conversation.id, run_id=run_id, frames=frames, caller_id=caller.id)


def _source_checks(services: Services) -> SourceChecks:
    """The ingest's checks of the normative texts' official sources, from the index the answer searched."""
    from groundchat.corpus.source_checks import SourceCheck, checked_sources
    from groundchat.search.index_meta import serving_meta

    def read() -> dict[str, SourceCheck]:
        return checked_sources(serving_meta(getattr(services.docs, "backend", None)))

    return read


def _summariser(services: Services, conversation: ConversationOpened, run_id: str, spend: BudgetGuard) -> Summariser:
    return Summariser(services.model, spend, services.dynamo, conversation.id, run_id,
                      stored_summary(conversation.existing), services.settings.bot_name, services.settings.max_output_tokens)


async def _question_images(services: Services, uploads: Uploads) -> list[ImageRef] | Refusal:
    try:
        return await prepare_question_images(services.settings, services.model, uploads)
    except ImagesRefused as refused:
        return Refusal(400, refused.code, refused.message)


def _configuration_problem(services: Services) -> Refusal | None:
    enabled, reason, how = services.model_status()
    if not enabled:
        return Refusal(503, "chat-not-configured", f"The chat is not configured: {reason}", {"how_to_fix": how})
    try:
        price_for(services.model.price_id, services.settings)
    except PricingError as exc:  # an unpriced model is never called: its spending could not be capped
        return Refusal(503, "chat-not-configured", f"The chat is not configured: {exc}",
                       {"how_to_fix": "Add the model to GROUNDCHAT_PRICES_FILE."})
    if services.public:
        # The app refuses to start with a hole; an in-process caller (the CLI) meets it here instead.
        from groundchat.public.startup_check import public_mode_problems

        holes = public_mode_problems(services.settings)
        if holes:
            return Refusal(503, "chat-not-configured", f"Public mode lacks a guard: {'; '.join(holes)}",
                           {"how_to_fix": "See the README's \"Going public\"."})
    return None


async def _caller_problem(services: Services, caller: Caller | None) -> Refusal | None:
    if caller is None:
        return Refusal(401, "unauthenticated", SIGN_IN_MESSAGE)
    if not await services.can(CHAT_USE, caller):
        return Refusal(403, "forbidden", f"You do not have the permission {CHAT_USE!r}.")
    return None




async def _with_recall_plan(plan: JsonObject, frames: AsyncIterator[Frame]) -> AsyncIterator[Frame]:
    """The frames, the `done` frame carrying the recall plan: the page's Details say whether past
    conversations were searched, and why, even when they were not."""
    async for frame in frames:
        yield frame.model_copy(update={"recall": plan}) if isinstance(frame, DoneFrame) else frame
