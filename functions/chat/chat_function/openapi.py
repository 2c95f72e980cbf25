"""What the OpenAPI document says each route accepts and answers, so a client (or a fuzzer) sees
the request body of `POST /api/chat`, every refusal and every content type the routes really give."""
from __future__ import annotations

from typing import Any, get_args

from groundchat.exchange.frames import FrameType
from groundchat.web.http_errors import ErrorBody


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    words = {
        400: "the request is malformed", 401: "no verified caller", 403: "the caller lacks the permission",
        404: "no such thing (or not yours)", 409: "the conversation is full or busy", 413: "the body is too large",
        422: "the Idempotency-Key was sent before with another question",
        429: "a spending cap could be passed", 500: "an unexpected failure (typed)",
        502: "the JSON answer's generation failed at the model provider or gateway (its `error` says how)",
        503: "the chat is not configured, or the store cannot be reached (Retry-After)",
    }
    return {status: {"model": ErrorBody, "description": words[status]} for status in statuses}


# Every route can meet a store that is down (503) or an unexpected failure (500), both typed.
ALWAYS = (500, 503)

def chat_request(max_question_chars: int, max_top_k: int) -> dict[str, Any]:
    """The body `answer_question` accepts: `ChatBody`'s own JSON schema with this deployment's
    bounds written in (chat/question_body.py states every rule once). The same fields may come as
    multipart/form-data with the question's images (chat_function/uploads.py): said in the route's
    description, not as a schema, since no schema can say which bytes are an image, and a fuzzer
    would take every refused file for a valid request refused."""
    # Imported here, not at the top: the answer use case's modules (~25 ms) load with the first
    # question or the first OpenAPI document, not at every cold start (see document_chat_request).
    from groundchat.chat.question_body import BodyLimits, ChatBody

    schema = ChatBody.within(BodyLimits(max_question_chars, max_top_k)).model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _add_json_answer_schema(document: dict[str, Any]) -> None:
    """`ChatResponse` (and the models it holds) among the document's schemas, for the JSON answer."""
    from chat_function.json_answer import ChatResponse

    schema = ChatResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(schema.pop("$defs", {}))
    schemas["ChatResponse"] = schema


def document_chat_request(app: Any, max_question_chars: int, max_top_k: int) -> None:
    """Adds `POST /api/chat`'s request body to the OpenAPI document when the document is first built
    (FastAPI's way of extending it: replacing `app.openapi`), instead of building the schema, and
    importing the answer use case it comes from, when the app is constructed."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = build()
            document["paths"]["/api/chat"]["post"].update(chat_request(max_question_chars, max_top_k))
            _add_json_answer_schema(document)
        return app.openapi_schema

    app.openapi = openapi


def _failed_answer_or_refusal(status: int) -> dict[str, Any]:
    refusal = {"$ref": "#/components/schemas/ErrorBody"}
    answer = {"$ref": "#/components/schemas/ChatResponse"}
    return {"description": refusals(status)[status]["description"] + "; or a JSON answer whose generation failed",
            "content": {"application/json": {"schema": answer if status == 502 else {"anyOf": [refusal, answer]}}}}


CHAT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "one JSON answer; or, asked with `\"stream\": true` or `Accept: text/event-stream`, the answer "
                         "as server-sent events, each a frame: its type as the event, its payload as JSON data",
          "content": {"text/event-stream": {"schema": {
              "type": "object",
              "required": ["event", "data"],
              "properties": {"event": {"enum": list(get_args(FrameType))}, "data": {"type": "string"}},
          }}, "application/json": {"schema": {"$ref": "#/components/schemas/ChatResponse"}}}},
    **refusals(400, 401, 403, 404, 409, 413, 422, 429, *ALWAYS),
    # A JSON answer whose generation failed carries the failure's own status (500, 502, 503), with the ChatResponse.
    **{status: _failed_answer_or_refusal(status) for status in (500, 502, 503)},
}
HTML = {200: {"description": "an HTML page", "content": {"text/html": {"schema": {"type": "string"}}}}}
# An image of a conversation, as it was sent to the model (our own encoding of the upload).
IMAGE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the image", "content": {t: {"schema": {"type": "string", "format": "binary"}}
                                                  for t in ("image/png", "image/jpeg", "image/webp")}},
    **refusals(401, 403, 404, *ALWAYS),
}


def asset_response(media_type: str) -> dict[int | str, dict[str, Any]]:
    return {200: {"description": "a page asset", "content": {media_type: {"schema": {"type": "string"}}}}}
