"""The package's layout rules, checked on the source so a change that breaks them fails here.

- No import circles between modules of the package (function-local imports count too: a lazy
  import that hides a circle is still a circle; ``if TYPE_CHECKING:`` blocks do not count).
- Stages are layered in the order written in ``docs/architecture.md``: a module imports only from
  its own stage or an earlier one.
- Configuration is read in one place: ``os.environ`` / ``getenv`` appear only in ``settings.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "searchnasa"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """The package's modules that ``name`` imports (a name imported from a package that is itself
    a submodule counts as that submodule)."""
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.split(".")[0] == "searchnasa")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] != "searchnasa":
                    continue
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in MODULES else target)
            visit(child)

    visit(tree)
    found.discard(name)
    return {m for m in found if m in MODULES}


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target in _imports(tree, name, path.name == "__init__.py"):
            graph.add_edge(name, target)
    return graph


def stage_order() -> list[list[str]]:
    """The stages, earliest first, from the fenced ``stages:`` block of docs/architecture.md: one
    line per stage, the modules or packages that form it (relative to ``searchnasa``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"```text\nstages:\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md must hold the stage order in a ```text block opening 'stages:'"
    stages = []
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            stages.append(line.split())
    return stages


def stage_of(module: str, stages: list[list[str]]) -> int:
    rel = module.removeprefix("searchnasa").lstrip(".")
    if not rel:
        return 0  # the package's own __init__ (its version) belongs to the core
    best = None
    for i, members in enumerate(stages):
        for member in members:
            if rel == member or rel.startswith(member + "."):
                if best is None or len(member) > best[1]:
                    best = (i, len(member))
    assert best is not None, f"{module} belongs to no stage in docs/architecture.md"
    return best[0]


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, f"modules importing each other: {circles}"


def test_every_module_imports_only_from_its_own_stage_or_an_earlier_one() -> None:
    stages = stage_order()
    graph = import_graph()
    backward = [f"{a} ({stages[stage_of(a, stages)][0]}) imports {b} ({stages[stage_of(b, stages)][0]})"
                for a, b in graph.edges if stage_of(b, stages) > stage_of(a, stages)]
    assert not backward, "imports from a later stage:\n" + "\n".join(sorted(backward))


def test_every_module_has_a_stage() -> None:
    stages = stage_order()
    for name in MODULES:
        stage_of(name, stages)


def test_the_rules_catch_what_they_are_for() -> None:
    """The checks themselves: a circle and a backward import in made-up modules are found."""
    graph = nx.DiGraph([("a", "b"), ("b", "a")])
    assert [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    stages = [["records"], ["store"], ["web"]]
    assert stage_of("searchnasa.store.database", stages) == 1
    assert stage_of("searchnasa.web", stages) == 2
    tree = ast.parse("def f():\n    from searchnasa.web import app\n")
    assert _imports(tree, "searchnasa.store.database", False) == {"searchnasa.web.app"}
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from searchnasa.web import app\n")
    assert _imports(tree, "searchnasa.store.database", False) == set()


@pytest.mark.parametrize("pattern", [r"\bos\.environ\b", r"\bgetenv\b"])
def test_configuration_is_read_only_in_settings(pattern: str) -> None:
    offenders = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
                 if p.name != "settings.py" and re.search(pattern, p.read_text(encoding="utf-8"))]
    assert not offenders, f"{pattern} outside settings.py: {offenders}"
