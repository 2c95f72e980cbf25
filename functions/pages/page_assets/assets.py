"""The page assets both page-serving functions serve (the transcript's script and style)."""
from __future__ import annotations

from importlib import resources

ASSETS = {
    "transcript.js": "text/javascript",
    "view_stream.js": "text/javascript",
    "transcript.css": "text/css",
}


def asset(name: str) -> tuple[str, str]:
    """(text, media type) of a shared asset; KeyError for anything else."""
    media_type = ASSETS[name]
    return resources.files("page_assets").joinpath(name).read_text(), media_type
