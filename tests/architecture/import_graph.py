"""The core layer's import graph, read from the source (nothing is imported to build it)."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

# What the layer must never import: the functions and the CLI sit above it, the test kit is never
# shipped, and the core is framework-free (the web stack lives in the functions).
FORBIDDEN_TOP_LEVEL = {
    "chat_function": "a function package",
    "share_function": "a function package",
    "ingest_function": "a function package",
    "sweep_function": "a function package",
    "page_assets": "the pages' script and style (the page-serving functions' own)",
    "groundchat_cli": "the CLI package",
    "groundchat_testkit": "the test kit",
    "fastapi": "a web framework",
    "starlette": "a web framework",
    "uvicorn": "a web server",
    "mangum": "a web adapter",
    "moto": "the local DynamoDB stand-in",
}


@dataclass
class ImportGraph:
    root_package: str
    modules: set[str] = field(default_factory=set)
    edges: dict[str, set[str]] = field(default_factory=dict)  # module -> modules of the same package
    external: dict[str, set[str]] = field(default_factory=dict)  # module -> top-level names outside

    def forbidden_imports(self) -> list[str]:
        found = []
        for module, names in sorted(self.external.items()):
            for name in sorted(names):
                if name in FORBIDDEN_TOP_LEVEL:
                    found.append(f"{module} imports {name} ({FORBIDDEN_TOP_LEVEL[name]})")
        return found

    def cycles(self) -> list[list[str]]:
        """Every strongly connected component with more than one module (or a self-import)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []
        counter = [0]

        def visit(node: str) -> None:
            # Iterative Tarjan: deep import chains must not hit the recursion limit.
            work = [(node, iter(sorted(self.edges.get(node, ()))))]
            index[node] = low[node] = counter[0]
            counter[0] += 1
            stack.append(node)
            on_stack.add(node)
            while work:
                current, children = work[-1]
                advanced = False
                for child in children:
                    if child not in index:
                        index[child] = low[child] = counter[0]
                        counter[0] += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(sorted(self.edges.get(child, ())))))
                        advanced = True
                        break
                    if child in on_stack:
                        low[current] = min(low[current], index[child])
                if advanced:
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[current])
                if low[current] == index[current]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == current:
                            break
                    if len(component) > 1 or current in self.edges.get(current, ()):
                        found.append(sorted(component))

        for module in sorted(self.modules):
            if module not in index:
                visit(module)
        return found


    def wing_of(self, module: str) -> str:
        """`groundchat.chat.loop` -> `chat`; a module at the package's top is a wing of its own."""
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else parts[0]

    def wing_edges(self) -> set[tuple[str, str]]:
        return {(self.wing_of(a), self.wing_of(b)) for a, targets in self.edges.items() for b in targets
                if self.wing_of(a) != self.wing_of(b)}

    def arrows_back_up(self) -> list[tuple[str, str]]:
        """Wing-to-wing imports that close a loop between wings: A imports B while B, through any
        path, imports A. Wings stacked in floors have none; each one is an arrow running back up."""
        edges = self.wing_edges()
        reach: dict[str, set[str]] = {}
        for a, b in edges:
            reach.setdefault(a, set()).add(b)

        def reaches(start: str, goal: str) -> bool:
            seen, todo = set(), [start]
            while todo:
                node = todo.pop()
                if node == goal:
                    return True
                if node not in seen:
                    seen.add(node)
                    todo.extend(reach.get(node, ()))
            return False

        return sorted((a, b) for a, b in edges if reaches(b, a))


def module_name(root: Path, path: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def build_graph(package_dir: Path) -> ImportGraph:
    """Every import in every module of `package_dir`, including those inside functions."""
    package = package_dir.name
    graph = ImportGraph(package)
    files = sorted(package_dir.rglob("*.py"))
    for path in files:
        graph.modules.add(module_name(package_dir, path, package))
    for path in files:
        module = module_name(package_dir, path, package)
        is_package = path.name == "__init__.py"
        graph.edges.setdefault(module, set())
        graph.external.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            for target in _targets(node, module, is_package):
                top = target.split(".")[0]
                if top == package:
                    resolved = _existing(target, graph.modules)
                    if resolved and resolved != module:
                        graph.edges[module].add(resolved)
                else:
                    graph.external[module].add(top)
    return graph


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        # `from a.b import c` imports a.b, and a.b.c when c is a module.
        return [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]
    return []


def _existing(target: str, modules: set[str]) -> str | None:
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in modules:
            return name
        parts.pop()
    return None
