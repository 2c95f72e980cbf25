"""What a question's request carries besides its text: files as the client sent them, or the one
problem that kept them from being read. Checked by `validation` (content) and `question` (model)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union


@dataclass(frozen=True)
class Upload:
    filename: str
    data: bytes = b""
    alt: str | None = None  # None: the file name stands in


@dataclass(frozen=True)
class UploadProblem:
    """The request's envelope (e.g. its multipart body) could not be read as a question."""

    message: str


Uploads = Union[Sequence[Upload], UploadProblem]


class ImagesRefused(ValueError):
    """A question's images refused before anything is stored or any model is called (400).
    `code`: bad-request (the envelope), bad-image (a file), images-not-accepted (the model)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
