"""The core layer imports no function, no CLI, no test kit and no web framework, and has no import
cycle. Read from the source, so it holds for code no test happens to import."""
from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import build_graph

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "groundchat"


def test_the_layer_imports_no_function_no_cli_no_test_kit_and_no_web_framework():
    assert build_graph(CORE).forbidden_imports() == []


def test_the_layer_has_no_import_cycle():
    assert build_graph(CORE).cycles() == []


def test_the_graph_sees_the_layer_as_it_is():
    graph = build_graph(CORE)
    # A graph that read nothing would pass both checks above: it must see real modules and edges.
    assert {"groundchat.chat.loop", "groundchat.spending.step_guard", "groundchat.store.tables"} <= graph.modules
    assert "groundchat.models.messages" in graph.edges["groundchat.chat.loop"]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",
        "store/__init__.py": "",
        "store/b.py": "",
        "b.py": "def f():\n    from pkg import a\n",
    })
    assert build_graph(root).cycles() == [["pkg.a", "pkg.b"]]


def test_relative_imports_are_resolved_into_the_cycle_check(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "x/__init__.py": "",
        "x/one.py": "from .two import y\n",
        "x/two.py": "from . import one\n",
    })
    assert build_graph(root).cycles() == [["pkg.x.one", "pkg.x.two"]]


def test_an_import_of_a_function_the_cli_or_fastapi_is_named(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "web.py": "import fastapi\n",
        "local.py": "def serve():\n    from groundchat_cli.localstack import serve\n",
        "route.py": "from chat_function.app import create_app\n",
    })
    assert build_graph(root).forbidden_imports() == [
        "pkg.local imports groundchat_cli (the CLI package)",
        "pkg.route imports chat_function (a function package)",
        "pkg.web imports fastapi (a web framework)",
    ]
