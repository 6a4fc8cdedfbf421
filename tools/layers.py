"""Check that pytest_kernelbench keeps its house in order: imports point down the layers, no
module imports another in a cycle, no import of the package's own modules hides in a function,
and only the plugin imports pytest.

Prints module sizes per layer, the largest classes and functions, and every violation; exits 1
when there is one, 0 otherwise.

    python3 tools/layers.py [--all] [PACKAGE_DIR]

PACKAGE_DIR defaults to the repository's pytest_kernelbench/; --all lists every class and
function by size instead of the largest few.

The layers, lowest first (an import may point at its own layer or a lower one):
foundation (faults, nested, record, precision, settings, confine, child_startup) < suite < gpu <
building < isolation < judge < reporting < engine < plugin, api. plugin and api share the top rank but
are separate layers: neither may import the other, so `import pytest_kernelbench` never loads
the plugin.

Function-local imports count towards cycles: they only defer one. A function may still import
an optional heavy dependency (torch, triton, matplotlib) of its own; it may not import the
package's own modules, since that is how cycles hide.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pytest_kernelbench"

# Each rank names its layers; each layer names the top-level modules or subpackages it holds.
# The package's own __init__ re-exports the API, so it sits with the API.
RANKS: tuple[dict[str, tuple[str, ...]], ...] = (
    {"foundation": ("faults", "nested", "record", "precision", "settings", "confine",
                    "child_startup")},
    {"suite": ("suite",)},
    {"gpu": ("gpu",)},
    {"building": ("building",)},
    {"isolation": ("isolation",)},
    {"judge": ("judge",)},
    {"reporting": ("reporting",)},
    {"engine": ("engine",)},
    {"plugin": ("plugin",), "api": ("api", "__init__")},
)
PYTEST_LAYER = "plugin"
LARGEST_SHOWN = 10


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    local: bool


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    lines: int
    tree: ast.Module


@dataclass(frozen=True)
class Definition:
    qualified_name: str
    kind: str
    lines: int


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    for rank in RANKS:
        for layer, members in rank.items():
            if head in members:
                return layer
    return None


def rank_of(layer: str) -> int:
    return next(index for index, rank in enumerate(RANKS) if layer in rank)


def module_name(package_dir: Path, path: Path) -> str:
    parts = list(path.relative_to(package_dir).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def read_modules(package_dir: Path) -> dict[str, Module]:
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        source = path.read_text()
        name = module_name(package_dir, path)
        modules[name] = Module(name, path, len(source.splitlines()), ast.parse(source, str(path)))
    return modules


def absolute_base(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imported_names(module: Module, node: ast.Import | ast.ImportFrom, known: Iterable[str]) -> Iterator[str]:
    """The modules an import statement loads: `from a import b` names a.b when b is a module."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = absolute_base(module, node)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in known else base


def walk_imports(
    node: ast.AST, in_function: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from walk_imports(child, inside)


def imports_of(module: Module, known: Iterable[str]) -> list[Import]:
    found: dict[Import, None] = {}
    for node, local in walk_imports(module.tree):
        for target in imported_names(module, node, known):
            found[Import(module.name, target, node.lineno, local)] = None
    return list(found)


def is_own(target: str) -> bool:
    return target == PACKAGE or target.startswith(PACKAGE + ".")


def is_pytest(target: str) -> bool:
    return target.split(".")[0] in ("pytest", "_pytest")


def definitions(module: Module) -> Iterator[Definition]:
    short = module.name.removeprefix(PACKAGE + ".")

    def visit(node: ast.AST, prefix: str) -> Iterator[Definition]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}.{child.name}"
                kind = "class" if isinstance(child, ast.ClassDef) else "def"
                end = child.end_lineno or child.lineno
                yield Definition(name, kind, end - child.lineno + 1)
                yield from visit(child, name)

    yield from visit(module.tree, short)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the components of more than one module, or of one that imports itself."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                connect(successor)
                lowlink[node] = min(lowlink[node], lowlink[successor])
            elif successor in on_stack:
                lowlink[node] = min(lowlink[node], index[successor])
        if lowlink[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def where(found: Import, modules: dict[str, Module], package_dir: Path) -> str:
    return f"{modules[found.importer].path.relative_to(package_dir.parent)}:{found.line}"


def violations(modules: dict[str, Module], package_dir: Path) -> list[str]:
    problems = []
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        layer = layer_of(name)
        if layer is None:
            problems.append(f"{module.path.relative_to(package_dir.parent)}: in no layer of the table")
        for found in imports_of(module, modules):
            at = where(found, modules, package_dir)
            if is_pytest(found.target) and layer != PYTEST_LAYER:
                problems.append(f"{at}: imports {found.target} outside {PYTEST_LAYER}/")
            if not is_own(found.target) or found.target not in modules:
                continue
            if found.target != name:
                graph[name].add(found.target)
            if found.local:
                problems.append(f"{at}: function-local import of {found.target}")
            target_layer = layer_of(found.target)
            if layer is None or target_layer is None or target_layer == layer:
                continue
            if rank_of(target_layer) >= rank_of(layer):
                direction = "upward" if rank_of(target_layer) > rank_of(layer) else "sideways"
                problems.append(f"{at}: {layer} imports {target_layer} ({direction}): {found.target}")
    for component in strongly_connected(graph):
        problems.append("import cycle: " + " <-> ".join(component))
    return problems


def layer_table(modules: dict[str, Module]) -> list[str]:
    rows = []
    for rank in RANKS:
        for layer in rank:
            members = sorted(
                (module for name, module in modules.items() if layer_of(name) == layer),
                key=lambda module: -module.lines,
            )
            if not members:
                continue
            total = sum(module.lines for module in members)
            sizes = ", ".join(f"{short_name(module)} {module.lines}" for module in members)
            rows.append(f"  {layer:<10} {total:>5} lines: {sizes}")
    return rows


def short_name(module: Module) -> str:
    return module.path.stem


def report(package_dir: Path, show_all: bool) -> tuple[list[str], list[str]]:
    modules = read_modules(package_dir)
    found = sorted(
        (definition for module in modules.values() for definition in definitions(module)),
        key=lambda definition: -definition.lines,
    )
    shown = found if show_all else found[:LARGEST_SHOWN]
    total = sum(module.lines for module in modules.values())
    lines = [f"{PACKAGE}: {len(modules)} modules, {total} lines", "layers (lowest first):"]
    lines += layer_table(modules)
    lines.append(f"largest classes and functions ({len(shown)} of {len(found)}):")
    lines += [f"  {d.lines:>5}  {d.kind:<5} {d.qualified_name}" for d in shown]
    problems = violations(modules, package_dir)
    return lines, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_dir", nargs="?", type=Path, default=ROOT / PACKAGE)
    parser.add_argument("--all", action="store_true", help="list every class and function by size")
    arguments = parser.parse_args(argv)
    lines, problems = report(arguments.package_dir, arguments.all)
    print("\n".join(lines))
    if problems:
        print(f"{len(problems)} violations:")
        print("\n".join(f"  {problem}" for problem in problems))
        return 1
    print("no cycles, no upward or function-local imports of the package, pytest only in plugin/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
