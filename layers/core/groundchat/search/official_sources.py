"""The sources at their official addresses: fetched for the ingest, and each fetch recorded as a check
of the official text (corpus/source_checks.py) on the serving index, before anything is built."""
from __future__ import annotations

import dataclasses
import io
import json
import tarfile
import time
from pathlib import Path
from typing import Any, Sequence

from groundchat.corpus.source_checks import CHECKS_KEY, recorded_checks
from groundchat.search.index_meta import record_meta
from groundchat.search.source_spec import SourceSpec, source_hash


def fetch_official(specs: Sequence[SourceSpec], workdir: Path, client: Any = None) -> list[SourceSpec]:
    """The same manifest with each source downloaded from its official address into workdir."""
    import httpx

    client = client or httpx.Client(follow_redirects=True, timeout=120)
    out: list[SourceSpec] = []
    for spec in specs:
        if spec.official_url is None:
            out.append(spec)
            continue
        response = client.get(spec.official_url)
        response.raise_for_status()
        if spec.name == "wcag22":
            with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
                tar.extractall(workdir / "wcag", filter="data")
            root = next((workdir / "wcag").iterdir()) / "guidelines"
            out.append(dataclasses.replace(spec, path=root, official=True))
        else:
            target = workdir / f"{spec.name}.pdf"
            target.write_bytes(response.content)
            out.append(dataclasses.replace(spec, path=target, official=True))
    return out


def content_hash(spec: SourceSpec) -> str:
    """The source's files alone: a new converter is not a new text."""
    return source_hash(dataclasses.replace(spec, version=""))


def record_checks(store: object, serving: dict[str, str] | None, specs: Sequence[SourceSpec]) -> str:
    """The checks as they stand after this ingest's fetches, recorded on the serving index at once: a
    build that fails after a changed text was read leaves the check saying so."""
    checks = recorded_checks(serving, {s.name: content_hash(s) for s in specs if s.official}, time.time())
    if serving and any(spec.official for spec in specs):
        record_meta(store, {CHECKS_KEY: checks})
    return checks


def indexed_texts(specs: Sequence[SourceSpec]) -> str:
    """The hash of each source's text, as an index built from these specs holds it."""
    return json.dumps({s.name: content_hash(s) for s in specs}, sort_keys=True)


__all__ = ["content_hash", "fetch_official", "indexed_texts", "record_checks"]
