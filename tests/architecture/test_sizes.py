"""Sizes that keep one idea per place: a layer module over 350 lines or a function over 80 usually
holds two; the chat route maps HTTP to the answer use case and nothing more."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "layers" / "core" / "groundchat"
MAX_MODULE_LINES = 350
MAX_FUNCTION_LINES = 80
MAX_CHAT_ROUTE_LINES = 40


def functions_of(path: Path) -> dict[str, int]:
    """Every function and method in a module, by qualified name, with its length in lines."""
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    sizes[name] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return sizes


def test_no_module_in_the_layer_is_over_350_lines():
    long = {str(p.relative_to(CORE)): n for p in CORE.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_in_the_layer_is_over_80_lines():
    long = {
        f"{p.relative_to(CORE)}:{name}": n
        for p in CORE.rglob("*.py")
        for name, n in functions_of(p).items()
        if n > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_the_chat_route_is_http_only():
    sizes = functions_of(REPO / "functions" / "chat" / "chat_function" / "app.py")
    assert sizes["_chat_routes.chat"] <= MAX_CHAT_ROUTE_LINES
    source = (REPO / "functions" / "chat" / "chat_function" / "app.py").read_text()
    # The sequence lives in the core: the route never reserves, claims or runs the loop itself.
    for step in ("run_exchange", "BudgetGuard", "precheck", ".claim(", "shorten("):
        assert step not in source


def test_the_size_reader_measures_nested_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def outer():\n    def inner():\n        return 1\n    return inner\n\nclass K:\n    def m(self):\n        pass\n")
    assert functions_of(module) == {"outer": 4, "outer.inner": 2, "K.m": 2}
