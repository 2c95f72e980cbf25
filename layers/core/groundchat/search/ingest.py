"""Sources → converters → chunks → embeddings → a new index, swapped in only when complete.

Each source's files are hashed; when every hash and the embedding model match what the serving
index was built from, nothing is done. Otherwise a new index is filled: unchanged sources are
copied from the serving index with their vectors, changed ones are converted again, and only
chunks whose id (a hash of their text) is new are embedded, unless the vector cache beside a
local index has their exact text (search/vector_cache.py). The texts to embed, of every source
together, go to the model sorted by length. Any failure throws the new index away and leaves the
serving one as it was.

Before a build begins, our notes are checked against the chunks it will hold (corpus/notes.py):
under `GROUNDCHAT_NOTES_CHECK=stop` a note out of date fails the ingest, under `warn` it is logged,
reported in the summary and left out of the derived text.
"""
from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from groundchat.corpus import eaa, markdown_docs, question_bank, wcag
from groundchat.corpus.chunk import Chunk
from groundchat.corpus.dates import parse_utc
from groundchat.corpus.source_checks import CHECKS_KEY, INDEXED_KEY
from groundchat.corpus.index_text import INDEX_TEXT_VERSION, embedding_text
from groundchat.corpus.notes import Notes, NotesOutOfDate, NotesReport, check_notes, load, using
from groundchat.search.embeddings import Embedder
from groundchat.search.graph import GRAPH_VERSION, Graph, GraphSize, size_line
from groundchat.search.graph_build import store_graph
from groundchat.search.official_sources import fetch_official, indexed_texts, record_checks
from groundchat.search.source_spec import SourceSpec, source_hash
from groundchat.search.vector_cache import VectorCache, vector_cache_for

log = logging.getLogger("groundchat.search")

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): stage is `convert:<source>` or `embed`."""
# Texts per `embed` call for an embedder that does not batch by itself (Titan takes one text a
# call); the local model groups texts by tokens (embeddings.TOKENS_PER_BATCH) and reports each batch.
EMBED_SLICE = 16


WCAG_TARBALL = "https://github.com/w3c/wcag/archive/refs/tags/WCAG22-20241212.tar.gz"
EAA_PDF = "https://eur-lex.europa.eu/legal-content/EN/TXT/PDF/?uri=CELEX:32019L0882"


def manifest(corpus_dir: Path, docs_dir: Path) -> list[SourceSpec]:
    """The sources, read from a local folder (`GROUNDCHAT_CORPUS_DIR`)."""
    return [
        SourceSpec("wcag22", corpus_dir / "wcag22" / "guidelines", wcag.convert, wcag.source_files, WCAG_TARBALL,
                   version=wcag.CONVERTER_VERSION),
        SourceSpec("eaa", corpus_dir / "eaa" / "CELEX_32019L0882_EN_TXT.pdf", eaa.convert, eaa.source_files, EAA_PDF,
                   version=eaa.CONVERTER_VERSION),
        SourceSpec("docs", docs_dir, markdown_docs.convert, markdown_docs.source_files,
                   version=markdown_docs.CONVERTER_VERSION),
        # Shipped with the package, so the same in every deployment; never fetched.
        SourceSpec("questions", question_bank.bank_dir(), question_bank.convert, question_bank.source_files,
                   version=question_bank.CONVERTER_VERSION),
    ]


class Build(Protocol):
    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...
    def add_graph(self, graph: Graph) -> None: ...
    def commit(self, meta: dict[str, str]) -> None: ...
    def abort(self) -> None: ...


class Store(Protocol):
    layout: str  # the schema or template its builds write: another layout is built again, vectors reused

    def serving_meta(self) -> dict[str, str] | None: ...
    def serving_chunks(self, source: str) -> list[tuple[Chunk, np.ndarray]]: ...
    def begin(self, *, model_id: str, dimension: int) -> Build: ...


@dataclass
class SourceChange:
    source: str
    status: str  # "unchanged" | "converted"
    chunks: int = 0
    added: int = 0
    removed: int = 0
    embedded: int = 0
    cached: int = 0  # taken from the vector cache, not embedded


@dataclass
class IngestSummary:
    changed: bool
    model_id: str
    sources: list[SourceChange] = field(default_factory=list)
    total_chunks: int = 0
    seconds: float = 0.0
    reason: str = ""
    # The notes out of date with the text, left out of the serving index (GROUNDCHAT_NOTES_CHECK=warn);
    # when nothing changed, those of the index that keeps serving.
    notes_problems: list[str] = field(default_factory=list)
    graph: GraphSize = field(default_factory=dict)

    def lines(self) -> list[str]:
        if not self.changed:
            return [f"nothing changed ({self.reason}); the serving index was kept"]
        out = [f"new index: {self.total_chunks} chunks, model {self.model_id}, {self.seconds:.1f}s"]
        for s in self.sources:
            cached = f", {s.cached} from the vector cache" if s.cached else ""
            out.append(f"  {s.source}: {s.status}, {s.chunks} chunks (+{s.added} −{s.removed}, embedded {s.embedded}{cached})")
        out.extend([f"  graph: {size_line(self.graph)}"] if self.graph else [])
        if self.notes_problems:
            out.append(f"  notes: {len(self.notes_problems)} problem(s), indexed without the notes they name")
            out.extend(f"    {line}" for line in self.notes_problems)
        return out


def run_ingest(specs: Sequence[SourceSpec], store: Store, embedder: Embedder, *,
               progress: Progress | None = None, force: bool = False, use_vector_cache: bool = True,
               notes_check: str | None = None, notes: Notes | None = None) -> IngestSummary:
    """use_vector_cache=False embeds every text the serving index does not have, cache or not.
    notes_check is "stop" or "warn" (None: GROUNDCHAT_NOTES_CHECK); notes are the notes to check and
    index with (None: the package's)."""
    started = time.perf_counter()
    progress = progress or (lambda stage, done, total: None)
    hashes = {spec.name: source_hash(spec) for spec in specs}
    serving = store.serving_meta()
    # Recorded on the serving index before anything is built: a build that fails after a changed
    # source was read leaves the check saying so.
    checks = record_checks(store, serving, specs)
    # Stored vectors are reusable only if the same model embedded the same derived text.
    same_model = (bool(serving) and serving.get("model_id") == embedder.model_id
                  and serving.get("index_text") == INDEX_TEXT_VERSION)
    old_hashes: dict[str, str] = json.loads(serving.get("source_hashes", "{}")) if same_model and serving else {}
    # The graph's rules are part of the layout: rules that read the texts differently build again.
    same_layout = bool(serving) and (serving.get("layout"), serving.get("graph_version")) == (store.layout, GRAPH_VERSION)
    if not force and same_model and same_layout and old_hashes == hashes:
        return IngestSummary(changed=False, model_id=embedder.model_id, reason="every source hash and the model match",
                             seconds=time.perf_counter() - started,
                             notes_problems=json.loads((serving or {}).get("notes_problems", "[]")))
    notes = notes or load()
    # Vectors already computed for a chunk id are reused: the id is a hash of the cited text.
    previous: dict[str, dict[str, tuple[Chunk, np.ndarray]]] = {}
    if same_model:
        previous = {spec.name: {c.id: (c, v) for c, v in store.serving_chunks(spec.name)} for spec in specs}
    # Forced: every source is converted again (vectors are still reused by chunk id).
    converted = _convert(specs, previous, hashes, {} if force else old_hashes, progress)
    report = _checked_notes(converted, notes, notes_check)
    usable = notes.without(n.key for n in report.unusable())
    known = {cid: v for per in previous.values() for cid, (_, v) in per.items()}
    if serving and previous:
        # A vector embedded with a note now withheld, or without one no longer withheld, is not reused.
        built_with = notes.without(json.loads(serving.get("notes_withheld", "[]")))
        for cid in _derived_differently([c for _, chunks, _ in converted for c in chunks if c.id in known],
                                        built_with, usable):
            known.pop(cid)
    cache = vector_cache_for(store, embedder) if use_vector_cache else None
    build = store.begin(model_id=embedder.model_id, dimension=embedder.dimension)
    try:
        with using(usable):
            summary = _fill(converted, embedder, build, known, progress, cache)
        summary.notes_problems = report.lines()
        # Built from the chunks this index holds, so it changes whenever they do.
        summary.graph = store_graph(build, [c for _, chunks, _ in converted for c in chunks])
        build.commit({
            "graph_version": GRAPH_VERSION, "graph": json.dumps(summary.graph, sort_keys=True),
            "source_hashes": json.dumps(hashes, sort_keys=True),
            CHECKS_KEY: checks, INDEXED_KEY: indexed_texts(specs),
            "index_text": INDEX_TEXT_VERSION,
            "layout": store.layout,
            "notes_problems": json.dumps(report.lines()),
            "notes_withheld": json.dumps(sorted(n.key for n in report.unusable())),
            "built_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "chunks": str(summary.total_chunks),
        })
    except BaseException:
        build.abort()
        raise
    summary.seconds = time.perf_counter() - started
    return summary


Converted = list[tuple[SourceSpec, list[Chunk], SourceChange]]


def _convert(specs: Sequence[SourceSpec], previous: dict[str, dict[str, tuple[Chunk, np.ndarray]]],
             hashes: dict[str, str], old_hashes: dict[str, str], progress: Progress) -> Converted:
    """Every source's chunks: an unchanged one's from the serving index, the others converted."""
    seen: set[str] = set()
    converted: Converted = []
    for spec in specs:
        old = previous.get(spec.name, {})
        if old_hashes.get(spec.name) == hashes[spec.name] and old:
            pairs = list(old.values())
            seen.update(old)
            converted.append((spec, [c for c, _ in pairs], SourceChange(spec.name, "unchanged", chunks=len(pairs))))
            continue
        progress(f"convert:{spec.name}", 0, 1)
        chunks = strict_dates(spec, [c for c in _unique(spec.convert(spec.path)) if c.id not in seen])
        seen.update(c.id for c in chunks)
        progress(f"convert:{spec.name}", 1, 1)
        ids = {c.id for c in chunks}
        converted.append((spec, chunks, SourceChange(spec.name, "converted", chunks=len(chunks),
                                                     added=len(ids - set(old)), removed=len(set(old) - ids))))
    return converted


def _checked_notes(converted: Converted, notes: Notes, mode: str | None) -> NotesReport:
    """The notes checked against every source's chunks; under "stop" a problem fails the ingest here,
    before a build begins, so the serving index is left as it was."""
    if mode is None:
        from groundchat.config import get_settings

        mode = get_settings().notes_check
    report = NotesReport([p for _, chunks, _ in converted for p in check_notes(chunks, notes).problems])
    if report.problems and mode != "warn":
        raise NotesOutOfDate(report)
    for line in report.lines():
        log.warning("notes out of date, indexed without: %s", line)
    return report


def _derived_differently(chunks: list[Chunk], before: Notes, now: Notes) -> list[str]:
    with using(before):
        then = {c.id: embedding_text(c) for c in chunks}
    with using(now):
        return [c.id for c in chunks if embedding_text(c) != then[c.id]]


def _fill(converted: Converted, embedder: Embedder, build: Build, known_vectors: dict[str, np.ndarray],
          progress: Progress, cache: VectorCache | None) -> IngestSummary:
    summary = IngestSummary(changed=True, model_id=embedder.model_id)
    missing = [c for _, chunks, _ in converted for c in chunks if c.id not in known_vectors]
    texts = {c.id: embedding_text(c) for c in missing}
    from_cache = cache.get_many(list(texts.values())) if cache is not None and texts else {}
    to_embed = [c for c in missing if texts[c.id] not in from_cache]
    computed = _embed(embedder, [texts[c.id] for c in to_embed], progress)
    if cache is not None and computed:
        cache.put_many(computed.items())
    for c in missing:
        text = texts[c.id]
        known_vectors[c.id] = computed[text] if text in computed else from_cache[text]
    for spec, chunks, change in converted:
        if chunks:
            build.add(chunks, np.array([known_vectors[c.id] for c in chunks], dtype=np.float32))
        mine = [c for c in chunks if c.id in texts]
        change.cached = sum(1 for c in mine if texts[c.id] in from_cache)
        change.embedded = len(mine) - change.cached
        summary.sources.append(change)
        summary.total_chunks += len(chunks)
    return summary


def _embed(embedder: Embedder, texts: list[str], progress: Progress) -> dict[str, np.ndarray]:
    """Vectors by text, progress after each model call; texts longest last."""
    texts = sorted(set(texts), key=len)
    out: dict[str, np.ndarray] = {}
    if not texts:
        return out
    progress("embed", 0, len(texts))
    in_batches = getattr(embedder, "embed_in_batches", None)
    if in_batches is not None:
        batches = (([texts[i] for i in rows], vectors) for rows, vectors in in_batches(texts))
    else:
        batches = ((texts[i:i + EMBED_SLICE], embedder.embed(texts[i:i + EMBED_SLICE]))
                   for i in range(0, len(texts), EMBED_SLICE))
    for batch, vectors in batches:
        out.update(zip(batch, vectors))
        progress("embed", len(out), len(texts))
    return out


def strict_dates(spec: SourceSpec, chunks: list[Chunk]) -> list[Chunk]:
    """Every chunk's date checked as strict UTC before it is indexed (a converter that read it from
    a file has already named the line); SourceDateError fails the ingest and the serving index stays."""
    return [c if c.updated_at is None else c.model_copy(update={
        "updated_at": parse_utc(c.updated_at, file=f"{spec.path} (section {c.section})")}) for c in chunks]


def _unique(chunks: list[Chunk]) -> list[Chunk]:
    seen: set[str] = set()
    out = []
    for c in chunks:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def local_specs(settings: Any) -> list[SourceSpec]:
    return manifest(Path(settings.corpus_dir), Path(settings.docs_dir))


def specs_for(settings: Any, workdir: Path | None = None) -> list[SourceSpec]:
    """Local folder by default; the official addresses when GROUNDCHAT_CORPUS_SOURCE=official."""
    specs = local_specs(settings)
    if settings.corpus_source == "official":
        return fetch_official(specs, workdir or Path(tempfile.mkdtemp(prefix="groundchat-corpus-")))
    return specs
