"""`POST /api/ai-sdk/chat`: the chat for front ends built on the AI SDK (`useChat` with its default
transport). The same answer use case as `/api/chat`, every check in the same order and the same
commit; only the body it reads (chat_function/ai_sdk_body.py) and the stream it answers
(chat_function/ai_sdk_stream.py) are the SDK's."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from chat_function.ai_sdk_resume import add_ai_sdk_resume_route
from chat_function.ai_sdk_body import MAX_AI_SDK_BODY_BYTES, TransportBody, parse_ai_sdk_body, submitted_message_key
from chat_function.ai_sdk_stream import UIMessageStream
from chat_function.callers import caller_or_none, services_of, visit_of
from chat_function.errors import error
from chat_function.limits import read_limited
from chat_function.openapi import ALWAYS, refusals
from chat_function.public_mode import keep_visitor_session

PATH = "/api/ai-sdk/chat"


def _request_body(max_question_chars: int) -> dict[str, Any]:
    schema = TransportBody.model_json_schema()
    schema["properties"]["id"] = {"type": "string", "pattern": "^[0-9a-f]{32}$",
                                  "description": "the chat's id, taken as the conversation's: yours, or unused (then created)"}
    # JSON Schema cannot single out the last item: the question's shape is documented for every item,
    # and the description says that earlier messages, of any role and parts, are taken and not read.
    text = {"type": "string", "minLength": 1, "maxLength": max_question_chars, "pattern": r"\S"}
    schema["properties"]["messages"]["items"] = {
        "type": "object", "required": ["role", "parts"],
        "description": "UI messages, the user's question last; only its text parts are read (earlier messages, "
                       "whatever their role and parts, are not: the history is the stored conversation)",
        "properties": {"id": {"type": "string"}, "role": {"enum": ["user"]},
                       "parts": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
                           "type": "object", "required": ["type", "text"],
                           "properties": {"type": {"enum": ["text"]}, "text": text}}}},
    }
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the answer as the AI SDK's UI message stream (header `x-vercel-ai-ui-message-stream: v1`): "
                         "one `data: {part}` event per part, then `data: [DONE]`",
          "content": {"text/event-stream": {"schema": {
              "type": "object", "required": ["data"],
              "properties": {"data": {"type": "string", "description": "one part as JSON, or [DONE] last"}},
          }}}},
    **refusals(400, 401, 403, 404, 409, 413, 422, 429, *ALWAYS),
}


def add_ai_sdk_chat_route(app: FastAPI, max_question_chars: int) -> None:
    @app.post(PATH, responses=RESPONSES, response_class=Response, openapi_extra=_request_body(max_question_chars))
    async def ai_sdk_chat(request: Request) -> Response:
        """What the AI SDK's `DefaultChatTransport` posts: the last message's text is the question and
        `id` the conversation; the history is the stored conversation's, never the body's."""
        body = await read_limited(request, MAX_AI_SDK_BODY_BYTES)
        if body is None:
            return error(413, "too-large", f"The request body is over {MAX_AI_SDK_BODY_BYTES} bytes: send only the last "
                                           "message (prepareSendMessagesRequest); the history is ours already.")
        # Imported on the first question, as /api/chat does: no cold start pays for the answer use case.
        from groundchat.chat.answer import Refusal, answer_question

        services = services_of(request)
        # A repeat of the same message (a double submit, a retry) follows its first answer instead
        # of paying again; an `Idempotency-Key` header names the request instead when sent.
        outcome = await answer_question(services, caller_or_none(request), body, visit_of(request),
                                        parse=parse_ai_sdk_body, client_chosen_id=True,
                                        request_key=request.headers.get("idempotency-key") or submitted_message_key(body))
        if isinstance(outcome, Refusal):
            refused = error(outcome.status, outcome.code, outcome.message, **outcome.extra)
            refused.headers.update(outcome.headers)
            return keep_visitor_session(refused, outcome.visitor_session, request)
        stream = UIMessageStream(outcome.frames, services.settings.sse_heartbeat_seconds)
        return keep_visitor_session(stream, outcome.visitor_session, request)  # type: ignore[return-value]

    add_ai_sdk_resume_route(app, PATH)  # useChat({ resume: true }) after a reload
