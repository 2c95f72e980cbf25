"""What a client may send as a question, read and checked: the body of `POST /api/chat` (seed 002's
fields among them) as a `ChatBody`, or a 400 saying what is wrong. Nothing else is taken.

`ChatBody` is the only statement of that body: the deployment's bounds are written into it
(`ChatBody.within`), the body is validated by it, and the OpenAPI document's request schema is its
JSON schema (chat_function/openapi.py), so a rule changed here changes the document too."""
from __future__ import annotations

import json
from copy import copy
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Callable

from annotated_types import Le, MaxLen

from pydantic import ConfigDict, Field, StrictBool, ValidationError, create_model
from pydantic.fields import FieldInfo

from groundchat.corpus.chunk import SOURCES
from groundchat.exchange.refusal import Refusal
from groundchat.search.preferences import SearchPreferences, SearchSwitches, Source

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject

# The corpus id that names every source at once; each source's own id names that source alone.
ALL_SOURCES_CORPUS = "all"
CORPUS_IDS: tuple[str, ...] = (ALL_SOURCES_CORPUS, *SOURCES)
NO_WEB_SEARCH = ("web_enabled: there is no web search here; groundchat answers only from its own corpus "
                 f"({', '.join(SOURCES)}): send web_enabled false, or leave it out")
LONE_SURROGATE = "the body holds a lone surrogate (\\ud800-\\udfff): it is not text"
BOTH_LEGS_OFF = "include_vector and include_sparse: a search needs one of them; both are off"


@dataclass(frozen=True)
class BodyLimits:
    """This deployment's bounds on a question (GROUNDCHAT_MAX_QUESTION_CHARS and the search's
    excerpt ceiling): part of the contract, so the OpenAPI document states them."""

    max_question_chars: int
    max_top_k: int


def body_limits(settings: Settings) -> BodyLimits:
    return BodyLimits(max_question_chars=settings.max_question_chars, max_top_k=settings.search_max_excerpts)


def _request_rules(schema: JsonObject) -> None:
    # A search needs BM25 or the vector leg: both switched off is refused (parse_body, 400).
    schema["not"] = {"required": ["include_vector", "include_sparse"],
                     "properties": {"include_vector": {"const": False}, "include_sparse": {"const": False}}}


class ChatBody(SearchSwitches):
    """Exactly what a client may send: a question for a conversation, and what its searches may
    use (search/preferences.py: they only narrow; `top_k` and the leg switches are inherited from
    there as they are). Nothing else."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_request_rules)
    # Any string is read (a malformed id is the 404 of an unknown conversation, not a 400); the
    # schema names the shape our ids have.
    conversation_id: str | None = Field(default=None, min_length=1, max_length=64,
                                        description="a conversation of yours, as the start frame named it",
                                        json_schema_extra={"pattern": "^[0-9a-f]{32}$"})
    message: str = Field(min_length=1, description="the question", json_schema_extra={"pattern": r"\S"})
    # True: the SSE stream; False: one JSON answer (chat_function/json_answer.py); None: the
    # request's Accept header decides, JSON unless it asks for text/event-stream. Strict, as every
    # switch and count here: "false" is not false (it would stream) and true is not 1.
    stream: StrictBool | None = Field(default=None, description=(
        "true: the SSE stream; false or left out: one JSON answer (left out, `Accept: text/event-stream` "
        "asks for the stream)"))
    # Seed 002's names: the corpus searched (a source's id, or "all"), and the web search we do not have.
    corpus_id: str | None = Field(default=None, description='the corpus searched: one source\'s id, or "all"',
                                  json_schema_extra={"enum": [*CORPUS_IDS, None]})
    web_enabled: StrictBool = Field(default=False, description="there is no web search here: true is refused (400)",
                                    json_schema_extra={"const": False})
    sources: list[Source] | None = Field(default=None, min_length=1, max_length=len(SOURCES))

    @classmethod
    def within(cls, limits: BodyLimits) -> type[ChatBody]:
        """This body with the deployment's bounds written in: what `parse_body` validates with and
        what the OpenAPI document shows."""
        return _bounded(cls, limits)

    def search_preferences(self) -> SearchPreferences:
        return SearchPreferences(sources=self._searched_sources(), top_k=self.top_k, **self.switches())

    def corpus_problem(self) -> str | None:
        """Why `corpus_id` and `sources` cannot both hold, or None."""
        if self.corpus_id is None:
            return None
        if self.corpus_id not in CORPUS_IDS:
            return f"corpus_id: no corpus {self.corpus_id!r} here; the corpora are {', '.join(CORPUS_IDS)}"
        if self.corpus_id != ALL_SOURCES_CORPUS and self.sources and set(self.sources) != {self.corpus_id}:
            return f"sources: corpus {self.corpus_id!r} holds only the source {self.corpus_id}"
        return None

    def _searched_sources(self) -> tuple[Source, ...] | None:
        if self.sources:
            return tuple(dict.fromkeys(self.sources))
        if self.corpus_id in SOURCES:
            return (self.corpus_id,)  # type: ignore[return-value]  # checked against SOURCES above
        return None


@lru_cache(maxsize=8)
def _bounded(base: type[ChatBody], limits: BodyLimits) -> type[ChatBody]:
    def bounded(name: str, bound: object) -> tuple[object, FieldInfo]:
        # The base field as declared (default, description, schema), one more constraint on its type.
        field = copy(base.model_fields[name])
        return (Annotated[field.annotation, bound], field)

    return create_model("ChatBody", __base__=base, __module__=base.__module__,
                        message=bounded("message", MaxLen(limits.max_question_chars)),
                        top_k=bounded("top_k", Le(limits.max_top_k)))


def read_json(body: bytes | str | JsonObject, what: str) -> object | Refusal:
    """The body's JSON value (a dict passes as it is), or 400 saying why it has none: not UTF-8,
    nested deeper than `what` can be, or not JSON."""
    try:
        return body if isinstance(body, dict) else json.loads(body or b"null")
    except UnicodeDecodeError:
        return Refusal(400, "bad-request", "the body is not valid UTF-8")
    except RecursionError:
        return Refusal(400, "bad-request", f"the body is nested deeper than {what} can be")
    except json.JSONDecodeError:
        return Refusal(400, "bad-request", "the body is not JSON")


def parse_body(body: bytes | str | JsonObject, limits: BodyLimits) -> ChatBody | Refusal:
    """The request body as a question, or 400 with what is wrong: never an exception. The body
    holds two flat strings, so anything nested is refused as such, however deep."""
    raw = read_json(body, "a question")
    if isinstance(raw, Refusal):
        return raw
    try:
        parsed = ChatBody.within(limits).model_validate(raw)
    except ValidationError as exc:
        return Refusal(400, "bad-request", validation_problem(exc, _ACCEPTED, limits))
    if not _is_text(parsed.message) or not _is_text(parsed.conversation_id or ""):
        return Refusal(400, "bad-request", LONE_SURROGATE)
    if not parsed.message.strip():
        return Refusal(400, "bad-request", "message is empty")
    if not parsed.include_vector and not parsed.include_sparse:
        return Refusal(400, "bad-request", BOTH_LEGS_OFF)
    if parsed.web_enabled:
        return Refusal(400, "bad-request", NO_WEB_SEARCH)
    corpus = parsed.corpus_problem()
    if corpus:
        return Refusal(400, "bad-request", corpus, {"corpus_ids": list(CORPUS_IDS)})
    return parsed


# How a route's body becomes a question: `parse_body` for ours; a client protocol's reader for its own
# body (chat_function/ai_sdk_body.py), run at the same place in the order of checks (400).
BodyParser = Callable[["bytes | str | JsonObject", BodyLimits], "ChatBody | Refusal"]


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_ACCEPTED = f"a question may send only {', '.join(ChatBody.model_fields)}"


def validation_problem(exc: ValidationError, accepted: str, limits: BodyLimits | None = None, within: str = "") -> str:
    """One line for every way a body fails its model: a field that is not accepted names what is
    (`accepted`), the deployment's bounds are said in words, and `within` names the part of a
    larger body the model read."""
    problems: list[str] = []
    for err in exc.errors():
        where = ".".join([*filter(None, [within]), *(str(p) for p in err["loc"])]) or "body"
        kind = err["type"]
        if kind == "string_unicode":  # a lone surrogate (\ud800-\udfff) reads as JSON but is not text
            return LONE_SURROGATE
        if kind == "extra_forbidden":
            what = f"not allowed ({accepted})"
        elif where == "message" and kind == "string_too_short":
            problems.append("message is empty")
            continue
        elif where == "message" and kind == "string_too_long" and limits:
            problems.append(f"message is over {limits.max_question_chars} characters")
            continue
        elif where == "top_k" and kind == "less_than_equal" and limits:
            what = f"at most {limits.max_top_k} excerpts per search"
        else:
            what = err["msg"]
        problems.append(f"{where}: {what}")
    return "; ".join(problems)
