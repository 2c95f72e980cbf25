"""The layer's wings stand in floors, the loop reads one typed run, and `Any` stays rare. Read
from the source, so it holds for code no test imports."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.import_graph import build_graph

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "groundchat"
MAX_RUN_EXCHANGE_PARAMETERS = 4
# Each `Any` is a place no reader (and no checker) can say what travels. JSON has `json_shapes`,
# DynamoDB's items and requests `store/items.py`; what is left are pass-through proxies and the
# StepGuard's opaque reservation (14 at this writing).
MAX_ANY = 25


def any_uses(path: Path) -> int:
    """`Any` as a name (annotations included: they are parsed, not strings, under
    `from __future__ import annotations`) and as `typing.Any`; the import itself does not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "Any")
    dotted = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "Any")
    quoted = sum(node.value.count("Any") for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_annotation_text(node.value))
    return named + dotted + quoted


def _is_annotation_text(text: str) -> bool:
    # A quoted annotation ("dict[str, Any]"), never prose that happens to say "Any".
    return "Any" in text and " " not in text.replace(", ", ",")


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]] + \
        ([args.vararg.arg] if args.vararg else []) + ([args.kwarg.arg] if args.kwarg else [])


def test_no_import_between_wings_runs_back_up():
    assert build_graph(CORE).arrows_back_up() == []


def test_the_arrow_check_finds_a_loop_between_two_wings(tmp_path):
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", "low/__init__.py": "", "high/__init__.py": "",
                       "low/a.py": "from pkg.high import b\n", "high/b.py": "", "high/c.py": "import pkg.low.a\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert build_graph(root).arrows_back_up() == [("high", "low"), ("low", "high")]


def test_the_loop_takes_one_run():
    tree = ast.parse((CORE / "chat" / "loop.py").read_text(encoding="utf-8"))
    [run_exchange] = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "run_exchange"]
    assert len(parameters(run_exchange)) <= MAX_RUN_EXCHANGE_PARAMETERS
    assert parameters(run_exchange) == ["run"]


def test_any_in_the_layer_stays_rare():
    counts = {str(p.relative_to(CORE)): n for p in sorted(CORE.rglob("*.py")) if (n := any_uses(p))}
    assert sum(counts.values()) < MAX_ANY, sorted(counts.items(), key=lambda kv: -kv[1])[:15]


def test_the_composition_names_what_it_holds():
    """`Services` says what each part it builds is (a Protocol or a class), never `Any`."""
    tree = ast.parse((CORE / "services.py").read_text(encoding="utf-8"))
    [services] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Services"]
    untyped = [ast.unparse(node)[:60] for node in ast.walk(services)
               if isinstance(node, ast.Name) and node.id == "Any"]
    assert untyped == []


def test_the_any_counter_counts_annotations_and_ignores_prose(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('from typing import Any\nimport typing\n"""Any reader may call this."""\n'
                      'def f(x: Any, y: "dict[str, Any]") -> typing.Any:\n    return x\n')
    assert any_uses(module) == 3
