"""The embedding model's files as the packaged functions carry them: a folder on the import path.

`make package` (infra/package.py) copies whatever files the selected local model is made of (the
embeddings module's `local_model_files()`, in order) into a folder named `groundchat_model` in a
layer's python/ directory, with a manifest of their names and sha256. In Lambda that folder is
/opt/python/groundchat_model, found through the import path like any package, so the functions need
neither the packages the files came from nor a download. A file whose checksum differs from its
manifest is an error, never a silently different model.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Sequence

BUNDLE_NAME = "groundchat_model"
MANIFEST = "manifest.json"


class BundleError(RuntimeError):
    """The shipped model files are incomplete or not the ones their manifest names."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundle_dir() -> Path | None:
    """The shipped folder when one is on the import path (a namespace package: no __init__)."""
    spec = importlib.util.find_spec(BUNDLE_NAME)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / MANIFEST).is_file():
            return Path(location)
    return None


def shipped_files() -> tuple[Path, ...] | None:
    """The shipped model files in the order they were selected, or None when none is shipped. Sizes
    are checked here (cheap); the embedder checks the checksums it pins when it loads them."""
    folder = bundle_dir()
    if folder is None:
        return None
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        entries = manifest["files"]
        paths = tuple(folder / entry["name"] for entry in entries)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BundleError(f"{folder / MANIFEST} is unreadable: {exc}") from exc
    for path, entry in zip(paths, entries):
        if not path.is_file():
            raise BundleError(f"{path} is named in {folder / MANIFEST} but missing")
        if path.stat().st_size != entry.get("bytes"):
            raise BundleError(f"{path} has {path.stat().st_size} bytes, its manifest says {entry.get('bytes')}")
    return paths


def write_bundle(files: Sequence[Path], target: Path, model_id: str) -> Path:
    """Copies the model's files into `target`/groundchat_model with their manifest; returns the
    folder. Two files of one name would overwrite each other, so that is refused."""
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise BundleError(f"model files share a name: {names}")
    folder = target / BUNDLE_NAME
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    entries: list[dict[str, str | int]] = []
    for source in files:
        if not source.is_file():
            raise BundleError(f"model file {source} does not exist")
        shutil.copyfile(source, folder / source.name)
        entries.append({"name": source.name, "bytes": source.stat().st_size, "sha256": sha256_file(source)})
    (folder / MANIFEST).write_text(json.dumps({"model_id": model_id, "files": entries}, indent=2) + "\n",
                                   encoding="utf-8")
    return folder
