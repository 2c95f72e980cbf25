"""What a client may send as a question, read and checked: the body of `POST /api/chat` (seed 002's
fields among them) as a `ChatBody`, or a 400 saying what is wrong. Nothing else is taken."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from groundchat.corpus.chunk import SOURCES
from groundchat.exchange.refusal import Refusal
from groundchat.tools.search_preferences import SearchPreferences, Source

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

# The corpus id that names every source at once; each source's own id names that source alone.
ALL_SOURCES_CORPUS = "all"
CORPUS_IDS: tuple[str, ...] = (ALL_SOURCES_CORPUS, *SOURCES)
NO_WEB_SEARCH = ("web_enabled: there is no web search here; groundchat answers only from its own corpus "
                 f"({', '.join(SOURCES)}): send web_enabled false, or leave it out")


class ChatBody(BaseModel):
    """Exactly what a client may send: a question for a conversation, and what its searches may
    use (tools/search_preferences.py: they only narrow). Nothing else."""

    model_config = ConfigDict(extra="forbid")
    conversation_id: str | None = Field(default=None, min_length=1, max_length=64)
    message: str
    # True: the SSE stream; False: one JSON answer (chat_function/json_answer.py); None: the
    # request's Accept header decides, JSON unless it asks for text/event-stream. Strict, as every
    # switch and count here: "false" is not false (it would stream) and true is not 1.
    stream: StrictBool | None = None
    # Seed 002's names: the corpus searched (a source's id, or "all"), and the web search we do not have.
    corpus_id: str | None = None
    web_enabled: StrictBool = False
    sources: list[Source] | None = Field(default=None, min_length=1, max_length=len(SOURCES))
    top_k: int | None = Field(default=None, ge=1)
    include_vector: StrictBool = True
    include_sparse: StrictBool = True
    include_graph: StrictBool = True

    @field_validator("top_k", mode="before")
    @classmethod
    def _a_count_is_a_json_number(cls, value: object) -> object:
        # JSON's integer (3, or 3.0 as JSON Schema allows), never a boolean or a string of digits.
        if isinstance(value, (bool, str)):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    def search_preferences(self) -> SearchPreferences:
        return SearchPreferences(sources=self._searched_sources(), top_k=self.top_k,
                                 include_vector=self.include_vector, include_sparse=self.include_sparse,
                                 include_graph=self.include_graph)

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


def parse_body(body: bytes | str | JsonObject, max_question_chars: int) -> ChatBody | Refusal:
    """The request body as a question, or 400 with what is wrong: never an exception. The body
    holds two flat strings, so anything nested is refused as such, however deep."""
    raw = read_json(body, "a question")
    if isinstance(raw, Refusal):
        return raw
    try:
        parsed = ChatBody.model_validate(raw)
    except ValidationError as exc:
        return Refusal(400, "bad-request", _validation_problem(exc))
    if not _is_text(parsed.message) or not _is_text(parsed.conversation_id or ""):
        return Refusal(400, "bad-request", "the body holds a lone surrogate (\\ud800-\\udfff): it is not text")
    if not parsed.message.strip():
        return Refusal(400, "bad-request", "message is empty")
    if len(parsed.message) > max_question_chars:
        return Refusal(400, "bad-request", f"message is over {max_question_chars} characters")
    if not parsed.include_vector and not parsed.include_sparse:
        return Refusal(400, "bad-request", "include_vector and include_sparse: a search needs one of them; both are off")
    if parsed.web_enabled:
        return Refusal(400, "bad-request", NO_WEB_SEARCH)
    corpus = parsed.corpus_problem()
    if corpus:
        return Refusal(400, "bad-request", corpus, {"corpus_ids": list(CORPUS_IDS)})
    return parsed


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_ACCEPTED = ", ".join(ChatBody.model_fields)


def _validation_problem(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "body"
        what = f"not allowed (a question may send only {_ACCEPTED})" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{where}: {what}")
    return "; ".join(problems)
