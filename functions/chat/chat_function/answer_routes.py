"""Routes around an answer once it has started: follow it after a reload, stop it, rate it.

Each reads the store, never this process's memory, so the instance that answers a reconnect or a
stop need not be the one answering (store/answers_in_progress.py).
"""
from __future__ import annotations

from typing import Annotated, Literal, Union

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from chat_function.callers import asker, services_of, signed_in
from chat_function.errors import error
from chat_function.openapi import ALWAYS, refusals
from groundchat.auth.callers import CHAT_USE, Caller
from groundchat.ids import is_conversation_id
from groundchat.observability import record_count
from groundchat.services import Services
from groundchat.store.answers_in_progress import public_answer
from groundchat.store.feedback import MAX_TEXT_CHARS, OWNER, READER, alarming, public_feedback, reason_ids

# Reconnect and stop: also a public visitor, by the session cookie of the question (callers.asker).
may_follow = Depends(asker)
# A reconnect waits for the answer at most this long per request, below API Gateway's 29 s.
MAX_WAIT_SECONDS = 20

Reason = Literal["wrong-number", "citation-unsupported", "wrong-passage", "not-an-answer", "outdated", "other"]


class UpRating(BaseModel):
    """👍: the answer was right. No reasons; a short text if the reader wants one."""

    model_config = ConfigDict(extra="forbid")
    rating: Literal["up"]
    text: str = Field(default="", max_length=MAX_TEXT_CHARS)


class DownRating(BaseModel):
    """👎, with what was wrong (each reason once) and a short text (the page asks for one with
    "other")."""

    model_config = ConfigDict(extra="forbid")
    rating: Literal["down"]
    reasons: list[Reason] = Field(default_factory=list, max_length=6, json_schema_extra={"uniqueItems": True})
    text: str = Field(default="", max_length=MAX_TEXT_CHARS)

    @model_validator(mode="after")
    def _each_reason_once(self) -> DownRating:
        if len(set(self.reasons)) != len(self.reasons):
            raise ValueError("a reason is given twice")
        return self


# The body is one or the other, told apart by `rating` (so the document says what each may hold).
FeedbackBody = Annotated[Union[UpRating, DownRating], Field(discriminator="rating")]


def add_answer_routes(app: FastAPI) -> None:
    if set(Reason.__args__) != set(reason_ids()):  # the body's schema and the page's choices are one list
        raise RuntimeError("the rating route's reasons and data/feedback_reasons.json differ")

    @app.get("/api/conversations/{conversation_id}/answer", responses=refusals(401, 403, 404, *ALWAYS))
    async def answer_in_progress(conversation_id: str, request: Request, caller: Caller = may_follow,
                                 wait: int = Query(0, ge=0, le=MAX_WAIT_SECONDS)) -> Response:
        """The conversation's latest answer as the store has it: `running` (asked with `wait`, the
        reply comes when it ends or after `wait` seconds), `answered` (read the conversation),
        `stopped`, `failed` or `interrupted`; 204 when the conversation has no answer on record."""
        services = services_of(request)
        if not is_conversation_id(conversation_id):
            return error(404, "not-found", "No such conversation.")
        found = await services.answers.read_when_ended(conversation_id, caller.id, wait)
        if found is None:
            owned = await services.conversations.get_owned(conversation_id, caller.id)
            return Response(status_code=204) if owned else error(404, "not-found", "No such conversation.")
        return JSONResponse(public_answer(found))

    @app.post("/api/conversations/{conversation_id}/stop", status_code=202, responses=refusals(401, 403, 404, 409, *ALWAYS))
    async def stop(conversation_id: str, request: Request, caller: Caller = may_follow) -> Response:
        """Ask the answer in progress to stop: it ends at its next step boundary with `done`
        `reason: "stopped"`, from whichever instance runs it."""
        services = services_of(request)
        run_id = await services.answers.request_stop(conversation_id, caller.id) if is_conversation_id(conversation_id) else None
        if run_id is None:
            known = is_conversation_id(conversation_id) and (
                await services.answers.read(conversation_id, caller.id) is not None
                or await services.conversations.get_owned(conversation_id, caller.id) is not None)
            if not known:
                return error(404, "not-found", "No such conversation.")
            return error(409, "not-answering", "No answer to this conversation is in progress.")
        return JSONResponse({"stopping": True, "run_id": run_id}, status_code=202)

    @app.post("/api/conversations/{conversation_id}/messages/{seq}/feedback", responses=refusals(400, 401, 403, 404, *ALWAYS))
    async def rate(conversation_id: str, seq: int, body: FeedbackBody, request: Request,
                   caller: Caller = Depends(signed_in)) -> Response:
        """Rate one answer: its owner, or a signed-in reader of its shared page. Rating again
        replaces the earlier rating."""
        services = services_of(request)
        target = await _rated_answer(services, caller, conversation_id, seq)
        if isinstance(target, Response):
            return target
        conversation, message, audience = target
        reasons = list(body.reasons) if isinstance(body, DownRating) else []
        saved = await services.feedback.put(
            conversation_id=conversation_id, seq=seq, run_id=message.get("run_id"), person=caller.id, audience=audience,
            rating=body.rating, reasons=reasons, text=body.text.strip(), expires_at=int(conversation.get("expires_at", 0)))
        record_count("AnswerFeedback", rating=body.rating, audience=audience)
        from groundchat.telemetry import metrics as otel_metrics  # not loaded at a cold start

        otel_metrics.feedback(body.rating, reasons)
        if alarming(reasons):
            record_count("FeedbackWrongNumberOrCitation")  # the daily alarm's metric (template.yaml)
        return JSONResponse({"feedback": public_feedback(saved)})

    @app.get("/api/conversations/{conversation_id}/feedback", responses=refusals(401, 403, 404, *ALWAYS))
    async def my_feedback(conversation_id: str, request: Request, caller: Caller = Depends(signed_in)) -> Response:
        """The caller's own ratings in a conversation they own or may read shared, by message seq."""
        services = services_of(request)
        conversation = await _readable(services, caller, conversation_id)
        if conversation is None:
            return error(404, "not-found", "No such conversation.")
        mine = await services.feedback.mine(conversation_id, caller.id)
        return JSONResponse({"feedback": {str(seq): public_feedback(item) for seq, item in sorted(mine.items())}})


async def _readable(services: Services, caller: Caller, conversation_id: str) -> dict | None:
    """The conversation when the caller may rate its answers: theirs (with chat.use), or shared."""
    if caller.is_visitor or not is_conversation_id(conversation_id):
        return None  # an anonymous visitor has no one to be: ratings need a signed-in person
    item = await services.conversations.get(conversation_id)
    if item is None:
        return None
    if item.get("owner") == caller.id:
        return item if await services.can(CHAT_USE, caller) else None
    return item if item.get("shared_at") else None


async def _rated_answer(services: Services, caller: Caller, conversation_id: str, seq: int) -> tuple[dict, dict, str] | Response:
    conversation = await _readable(services, caller, conversation_id)
    if conversation is None:
        return error(404, "not-found", "No such conversation.")
    messages = await services.conversations.read_items(conversation_id)
    answers = _answer_seqs(messages)
    if seq not in answers:
        return error(404, "not-found", "No such answer in this conversation: rate an answer's last message.")
    audience = OWNER if conversation.get("owner") == caller.id else READER
    return conversation, answers[seq], audience


def _answer_seqs(messages: list[dict]) -> dict[int, dict]:
    """The message each answer ends with (its last assistant turn, which carries the answer's
    record), by seq: the one the page puts the rating on and the `done` frame names."""
    last: dict[str, dict] = {}
    for item in messages:
        if item.get("role") == "assistant":
            last[str(item.get("run_id"))] = item
    return {int(item["seq"]): item for item in last.values()}
