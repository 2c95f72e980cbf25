"""The checks a question passes before any model is called, in one order; the first that refuses answers.

    400  the request's key (an `Idempotency-Key`, the AI SDK's message id) cannot name a request
    503  no model, an unpriced one, or public mode with a guard missing
    401  no caller; 403 a caller without `chat.use` (public mode: the gate's 429 rate limit, 401/403
         grants or bot wall, 503 verifier unavailable; public/gate.py)
    400  a body that is not a question (the route's parser says why), or an image refused
    404  not the caller's conversation; 409 full, busy or being deleted; 422 a request key reused
         for another question. The conversation is claimed here: whoever goes on releases the claim.

The last check, 429, is the first steps' worst case reserved against every cap: it prices the
request the model will be sent, so the composition makes it once that is built (chat/answer.py).
A keyed request that repeats an answer running or answered passes as a `Repeat` to follow.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from groundchat.attachments.question import prepare_question_images
from groundchat.attachments.uploads import ImagesRefused, UploadProblem, Uploads
from groundchat.auth.callers import CHAT_USE, SIGN_IN_MESSAGE, Caller
from groundchat.chat.opening import ConversationOpened, Opening, Repeat, open_conversation
from groundchat.chat.question_body import BodyParser, ChatBody, body_limits, parse_body
from groundchat.chat.request_keys import hashed_key, request_key_problem
from groundchat.exchange.refusal import IssuedSession, Refusal
from groundchat.models.messages import ImageRef
from groundchat.spending.prices import PricingError, price_for
from groundchat.store.conversations import new_conversation_id

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject
    from groundchat.public.gate import Visit
    from groundchat.services import Services


@dataclass(frozen=True)
class Asking:
    """One request as a route hands it over: who sends it, what, and how its body is read."""

    caller: Caller | None
    body: bytes | str | JsonObject
    visit: Visit | None = None  # what the HTTP request says of its sender (public mode's gate judges it)
    uploads: Uploads = ()
    parse: BodyParser = parse_body
    # The body's conversation id is one the client made up (a chat SDK names its chats): an unused
    # one opens a new conversation under that id.
    client_chosen_id: bool = False
    request_key: str | None = None  # as the client sent it


@dataclass(frozen=True)
class Checked:
    """A question every check before the model passed, its conversation claimed for `run_id`
    (or the answer it repeats, to follow)."""

    caller: Caller
    body: ChatBody
    images: list[ImageRef]
    run_id: str
    conversation: ConversationOpened | Repeat
    visitor_session: IssuedSession | None = None  # a visitor verified by this request: set the cookie

    @property
    def question(self) -> str:
        return self.body.message.strip()


async def check_question(services: Services, asking: Asking) -> Checked | Refusal:
    """The checks in the order above; each line is one of them."""
    problem = request_key_problem(asking.request_key)
    if problem:  # 400
        return Refusal(400, "bad-request", problem)
    refused = configuration_problem(services)  # 503
    if refused:
        return refused
    admitted = await _admitted_caller(services, asking)  # 401, 403; or the public gate's
    if isinstance(admitted, Refusal):
        return admitted
    caller, session = admitted
    if isinstance(asking.uploads, UploadProblem):  # 400: a multipart body that cannot be read as a question
        return _keeping(session, Refusal(400, "bad-request", asking.uploads.message))
    body = asking.parse(asking.body, body_limits(services.settings))  # 400
    if isinstance(body, Refusal):
        return _keeping(session, body)
    images = await _question_images(services, asking.uploads)  # 400: a bad file, or a model without a bound
    if isinstance(images, Refusal):
        return _keeping(session, images)
    run_id = uuid.uuid4().hex
    conversation = await _opened(services, caller, body, asking, run_id)  # 404, 409, 422; or a repeat
    if isinstance(conversation, Refusal):
        return _keeping(session, conversation)
    return Checked(caller, body, images, run_id, conversation, session)


def configuration_problem(services: Services) -> Refusal | None:
    """503: no model, an unpriced one (its spending could not be capped), or public mode with a hole."""
    enabled, reason, how = services.model_status()
    if not enabled:
        return Refusal(503, "chat-not-configured", f"The chat is not configured: {reason}", {"how_to_fix": how})
    try:
        price_for(services.model.price_id, services.settings)
    except PricingError as exc:
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


async def _admitted_caller(services: Services, asking: Asking) -> tuple[Caller, IssuedSession | None] | Refusal:
    """The caller who may ask, and the visitor session this request issued (public mode), or why not."""
    if services.public:
        admitted = await services.public_gate.admit(asking.caller, asking.visit, services.can)
        return admitted if isinstance(admitted, Refusal) else (admitted.caller, admitted.new_session)
    if asking.caller is None:
        return Refusal(401, "unauthenticated", SIGN_IN_MESSAGE)
    if not await services.can(CHAT_USE, asking.caller):
        return Refusal(403, "forbidden", f"You do not have the permission {CHAT_USE!r}.")
    return asking.caller, None


def _keeping(session: IssuedSession | None, refusal: Refusal) -> Refusal:
    # The human check passed and its token is spent: refused or not, the visitor keeps the session.
    return replace(refusal, visitor_session=session) if session else refusal


async def _question_images(services: Services, uploads: Uploads) -> list[ImageRef] | Refusal:
    try:
        return await prepare_question_images(services.settings, services.model, uploads)
    except ImagesRefused as refused:
        return Refusal(400, refused.code, refused.message)


async def _opened(services: Services, caller: Caller, body: ChatBody, asking: Asking,
                  run_id: str) -> ConversationOpened | Repeat | Refusal:
    conversation_id, client_chosen, key = body.conversation_id, asking.client_chosen_id, hashed_key(asking.request_key)
    if conversation_id is None and key:
        # A keyed first question: its key names the new conversation for the key's window, so a
        # repeat finds the answer it repeats.
        conversation_id = await services.answers.conversation_for_key(caller.id, key, new_conversation_id())
        client_chosen = True
    return await open_conversation(services, caller, Opening(conversation_id, run_id, body.message.strip(),
                                                             client_chosen, key))
