"""The package's shape: imports run one way, from a higher layer down, and never in a circle.

Every `import` and `from ... import` in dreamcontext_council/ counts, at module level and
inside functions (and under `if TYPE_CHECKING:`), because a lazy import still ties the two
modules together. docs/architecture.md describes the same layers; a test below keeps the
two in step.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import dreamcontext_council

PACKAGE = Path(dreamcontext_council.__file__).parent
DOC = Path(__file__).parent.parent / "docs" / "architecture.md"

# Lowest first. A module may import its own unit and any unit of a lower layer; units of one
# layer do not import each other. `__init__` is the package's front door
# (`from dreamcontext_council import new_debate`).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "resources"),
    ("folder",),
    ("rules",),
    ("merge",),
    ("actions", "skills"),
    ("__init__",),
    ("views",),
    ("engine.providers",),
    ("engine.model_calls",),
    ("engine.prompting",),
    ("engine.research",),
    ("engine.protocol",),
    ("engine.setup",),
    ("engine",),
    ("evaluation", "council_mcp"),
    ("dashboard",),
    ("cli",),
    ("__main__",),
)
LAYER_OF = {unit: number for number, layer in enumerate(LAYERS) for unit in layer}


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name relative to it (`engine.setup.launch`)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if parts == ("__init__",):
            found["__init__"] = path
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The package's modules that `name` imports, anywhere in its file."""
    known = set(known)
    prefix = dreamcontext_council.__name__
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def local(dotted: str) -> str | None:
        if dotted == prefix:
            return "__init__"
        if dotted.startswith(prefix + "."):
            return dotted.removeprefix(prefix + ".")
        return None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [local(alias.name) for alias in node.names]
            found.update(t for t in targets if t)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                here = [] if name == "__init__" else name.split(".")
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                parent = ".".join([*base, *([node.module] if node.module else [])]) or "__init__"
            else:
                parent = local(node.module or "") or ""
                if not parent:
                    continue
            for alias in node.names:
                child = f"{parent}.{alias.name}" if parent != "__init__" else alias.name
                found.add(child if child in known else parent)
    found.discard(name)
    return {t for t in found if t in known}


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports."""
    found = modules(package)
    return {name: imports(name, path, found) for name, path in found.items()}


def unit_of(module: str) -> str:
    """The declared layer unit a module belongs to: the longest unit its name starts with."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in LAYER_OF:
            return candidate
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Each import from a module into a unit of its own layer or a higher one (not its own unit)."""
    bad = []
    for module, targets in sorted(edges.items()):
        unit = unit_of(module)
        for target in sorted(targets):
            other = unit_of(target)
            if other != unit and LAYER_OF[other] >= LAYER_OF[unit]:
                bad.append(f"{module} ({unit}) imports {target} ({other})")
    return bad


def test_no_import_circles() -> None:
    assert circles(graph()) == []


def test_imports_run_down_the_layers() -> None:
    assert upward(graph()) == []


def test_every_module_is_in_a_layer() -> None:
    for module in modules():
        unit_of(module)


def test_the_checks_see_a_circle_and_an_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "dreamcontext_council"
    (package / "rules").mkdir(parents=True)
    (package / "folder").mkdir()
    for init in ("__init__.py", "rules/__init__.py", "folder/__init__.py"):
        (package / init).write_text("")
    (package / "rules" / "a.py").write_text("from dreamcontext_council.rules import b\n")
    (package / "rules" / "b.py").write_text("def f():\n    from . import a\n")
    (package / "folder" / "c.py").write_text("from dreamcontext_council.rules.a import x\n")
    edges = graph(package)
    assert circles(edges) == [["rules.a", "rules.b"]]
    assert upward(edges) == ["folder.c (folder) imports rules.a (rules)"]


# -- docs/architecture.md ------------------------------------------------------------------


def packages() -> set[str]:
    """Every sub-package, as the doc writes it: `engine/setup/`."""
    return {
        path.parent.relative_to(PACKAGE).as_posix() + "/"
        for path in PACKAGE.rglob("__init__.py")
        if path.parent != PACKAGE
    }


def named_in_doc() -> set[str]:
    """The package folders docs/architecture.md names in backticks: `engine/setup/`.

    Only paths under one of the package's own folders count (not `templates/prompts/`)."""
    tops = {name.split("/")[0] for name in packages()}
    named = re.findall(r"`([a-z_]+(?:/[a-z_]+)*/)`", DOC.read_text(encoding="utf-8"))
    return {name for name in named if name.split("/")[0] in tops}


def test_the_doc_names_every_sub_package() -> None:
    assert packages() - named_in_doc() == set()


def test_every_package_the_doc_names_exists() -> None:
    assert named_in_doc() - packages() == set()


def test_the_doc_lists_the_layers_in_order() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers -->\n(.*?)<!-- /layers -->", text, re.S)
    assert block, "docs/architecture.md lost its <!-- layers --> list"
    rows = re.findall(r"^\d+\. (.+)$", block[1], re.M)
    # the names before the first ": " are the layer's packages; the rest describes them
    written = [tuple(re.findall(r"`([^`]+)`", row.split(": ")[0])) for row in rows]
    assert written == [tuple(_doc_name(u) for u in layer) for layer in reversed(LAYERS)]


def _doc_name(unit: str) -> str:
    """How the doc writes a unit: a package as `engine/setup/`, a module as `errors.py`."""
    if unit == "__init__":
        return "__init__.py"
    path = PACKAGE / unit.replace(".", "/")
    return f"{unit.replace('.', '/')}/" if path.is_dir() else f"{unit}.py"
