"""A source of the corpus as the ingest reads it, and the hash that says whether it changed."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from groundchat.corpus.chunk import Chunk


@dataclass(frozen=True)
class SourceSpec:
    name: str
    path: Path
    convert: Callable[[Path], list[Chunk]]
    files: Callable[[Path], list[Path]]
    official_url: str | None = None
    # The converter's version, part of the source hash: a converter that writes different chunks
    # from the same files makes the next ingest convert that source again.
    version: str = ""
    # Read from its official address this time: the ingest records the check (corpus/source_checks.py).
    official: bool = False


def source_hash(spec: SourceSpec) -> str:
    digest = hashlib.sha256()
    digest.update(f"converter {spec.version}".encode())
    digest.update(b"\0")
    base = spec.path if spec.path.is_dir() else spec.path.parent
    for f in spec.files(spec.path):
        # relpath, not relative_to: a source may read files beside its folder (Understanding WCAG).
        digest.update(Path(os.path.relpath(f, base)).as_posix().encode())
        digest.update(b"\0")
        digest.update(f.read_bytes())
    return digest.hexdigest()


__all__ = ["SourceSpec", "source_hash"]
