"""A question sent as multipart/form-data, beside the JSON body: a `message`, an optional
`conversation_id`, up to the configured number of `image` files, and an optional `alt` text per
image (in the same order; a missing or empty one is the file's name). The body was already read
within its limit (limits.py); this only splits it into the fields the answer use case checks.
A body that cannot be read as such a form becomes an UploadProblem, refused (400) in its turn,
after the caller checks, like any other malformed body."""
from __future__ import annotations

from typing import Any, AsyncIterator

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from groundchat.attachments.uploads import Upload, UploadProblem, Uploads

FIELDS = "message, conversation_id, image (files) and alt (one per image, in order)"
# More parts than this is no question of ours, whatever the limits on images say.
MAX_PARTS = 64
MAX_TEXT_PART_BYTES = 64 * 1024


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


async def read_question(request: Request, body: bytes) -> tuple[bytes | dict[str, Any], Uploads]:
    """(the body the answer use case parses, the files): JSON bodies pass through untouched."""
    if not is_multipart(request):
        return body, ()
    try:
        form = await MultiPartParser(request.headers, _once(body), max_files=MAX_PARTS, max_fields=MAX_PARTS,
                                     max_part_size=MAX_TEXT_PART_BYTES).parse()
    except MultiPartException as exc:
        return {}, UploadProblem(f"the multipart body cannot be read: {exc.message}")
    except UnicodeDecodeError:
        return {}, UploadProblem("a text field of the multipart body is not UTF-8")
    try:
        return await _split(form.multi_items())
    finally:
        await form.close()


async def _split(items: list[tuple[str, Any]]) -> tuple[dict[str, Any], Uploads]:
    fields: dict[str, str] = {}
    files: list[tuple[str, bytes]] = []
    alts: list[str] = []
    for name, value in items:
        is_file = isinstance(value, UploadFile)
        if name == "image" and is_file:
            files.append((value.filename or "", await value.read()))
        elif name == "alt" and not is_file:
            alts.append(value)
        elif name in ("message", "conversation_id") and not is_file and name not in fields:
            fields[name] = value
        else:
            return {}, UploadProblem(_misplaced(name, repeated=name in fields))
    if len(alts) > len(files):
        return {}, UploadProblem(f"{len(alts)} alt texts for {len(files)} images: send one alt per image, in order")
    return fields, [Upload(filename, data, alts[i] if i < len(alts) else None) for i, (filename, data) in enumerate(files)]


def _misplaced(name: str, repeated: bool) -> str:
    if repeated:
        why = "sent twice"
    elif name == "image":
        why = "must be a file"
    elif name in ("alt", "message", "conversation_id"):
        why = "must be text, not a file"
    else:
        why = "not allowed"
    return f"{name}: {why} (send {FIELDS})"


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body
