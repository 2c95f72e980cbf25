"""One idea per module, split where the ideas part: every layer module says its idea in its
docstring's first line, no two say the same, none is named as a part or a grab bag, and none reaches
into another's private names (a module cut at a line count leaves its halves doing that). A
generous size backstop stays; the chat route maps HTTP to the answer use case and nothing more.
Where the layer's wings may import one another is tests/architecture/test_house_shape.py's and
test_layer_imports.py's."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "layers" / "core" / "groundchat"
# A backstop, not the rule: the rule is the seams checked below. A cap near a module's natural size
# was met by squeezing and by cutting where the count ran out; past these, a module or a function
# here has always held two ideas, whatever its docstring says.
BACKSTOP_MODULE_LINES = 600
BACKSTOP_FUNCTION_LINES = 150
MAX_CHAT_ROUTE_LINES = 40
MAX_FIRST_LINE = 110
# A name that says "a part of something" or "whatever did not fit" instead of an idea.
PART_NAME = re.compile(r"^(utils?|helpers|misc|common|stuff|other|extras?)$|(\d+|_(more|rest|extras?|part\d*|misc))$")
# Private names still read across modules, each owed to a wing being rebuilt now (search/: one
# pipeline; tools/: tools owning their facts; web/: the page's assets moving out). The set only shrinks.
KNOWN_PRIVATE_READS = {
    ("search/embeddings.py", "groundchat.search.embedding_base._QueryMixin"),
    ("search/titan_embeddings.py", "groundchat.search.embedding_base._QueryMixin"),
    ("tools/data_tools.py", "groundchat.tools.rule_tool._rules"),
    ("web/run_pages.py", "groundchat.tools.data_tools._check_filter"),
    ("web/run_pages.py", "groundchat.tools.data_tools._run_row"),
    ("web/run_pages.py", "groundchat.tools.data_tools._runs"),
}


def layer_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def first_line(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return doc.splitlines()[0].strip() if doc else None


def private_reads(root: Path, package: str = "groundchat") -> set[tuple[str, str]]:
    """(module, imported private name) for every `from <a module of package> import _name`."""
    reads = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
                reads |= {(path.relative_to(root).as_posix(), f"{node.module}.{alias.name}")
                          for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")}
    return reads


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


def test_every_layer_module_says_its_one_idea_in_its_first_line():
    unsaid = [str(p.relative_to(CORE)) for p in layer_modules() if not first_line(p)]
    rambling = {str(p.relative_to(CORE)): line for p in layer_modules()
                if (line := first_line(p)) and len(line) > MAX_FIRST_LINE}
    assert unsaid == [] and rambling == {}


def test_no_two_layer_modules_say_the_same_idea():
    saying: dict[str, list[str]] = defaultdict(list)
    for path in layer_modules():
        if path.name != "__init__.py" or path.read_text(encoding="utf-8").strip():
            saying[(first_line(path) or "").rstrip(".:").lower()].append(str(path.relative_to(CORE)))
    assert {line: where for line, where in saying.items() if len(where) > 1} == {}


def test_no_layer_module_is_named_as_a_part():
    assert [str(p.relative_to(CORE)) for p in layer_modules() if PART_NAME.search(p.stem)] == []


def test_no_layer_module_reads_another_modules_private_names():
    assert private_reads(CORE) == KNOWN_PRIVATE_READS


def test_no_layer_module_or_function_passes_the_backstop():
    long = {str(p.relative_to(CORE)): n for p in layer_modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > BACKSTOP_MODULE_LINES}
    long |= {f"{p.relative_to(CORE)}:{name}": n for p in layer_modules()
             for name, n in functions_of(p).items() if n > BACKSTOP_FUNCTION_LINES}
    assert long == {}


def test_the_chat_route_is_http_only():
    sizes = functions_of(REPO / "functions" / "chat" / "chat_function" / "app.py")
    assert sizes["_chat_routes.chat"] <= MAX_CHAT_ROUTE_LINES
    source = (REPO / "functions" / "chat" / "chat_function" / "app.py").read_text()
    # The sequence lives in the core: the route never reserves, claims or runs the loop itself.
    for step in ("run_exchange", "BudgetGuard", "precheck", ".claim(", "shorten("):
        assert step not in source


def test_the_readers_see_what_they_measure(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""One idea.\n\nMore."""\ndef outer():\n    def inner():\n        return 1\n    return inner\n\n'
                      "class K:\n    def m(self):\n        pass\n")
    assert functions_of(module) == {"outer": 4, "outer.inner": 2, "K.m": 2}
    assert first_line(module) == "One idea."
    (tmp_path / "groundchat").mkdir()
    (tmp_path / "groundchat" / "a.py").write_text("from groundchat.b import _half, whole\nfrom groundchat.c import __all__\n")
    assert private_reads(tmp_path) == {("groundchat/a.py", "groundchat.b._half")}
    assert [name for name in ("router2", "runs_more", "utils", "store_part1", "run_list_reads", "helpers_of")
            if PART_NAME.search(name)] == ["router2", "runs_more", "utils", "store_part1"]
