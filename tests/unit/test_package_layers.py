"""The core's sub-packages layer their modules: imports between a package's modules form a DAG."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "dagster_ocr"
PACKAGES = sorted(p.parent for p in CORE.glob("*/__init__.py"))


def _module_imports(path: Path, package: str, modules: set[str]) -> set[str]:
    """Modules of ``package`` (by short name, ``__init__`` for the package itself) that ``path`` imports."""
    own = path.stem
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package
                base = package if node.level == 1 else package.rsplit(".", node.level - 1)[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            targets = [target] if target != package else [f"{package}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            if t == package:
                found.add("__init__")
            elif t.startswith(package + "."):
                name = t[len(package) + 1 :].split(".")[0]
                found.add(name if name in modules else "__init__")
    found.discard(own)
    return found


@pytest.mark.parametrize("folder", PACKAGES, ids=[p.name for p in PACKAGES])
def test_modules_of_a_core_package_import_without_cycles(folder: Path) -> None:
    package = f"dagster_ocr.{folder.name}"
    modules = {p.stem for p in folder.glob("*.py")}
    graph = {m: _module_imports(folder / f"{m}.py", package, modules) for m in modules}
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"{package}: import cycle {' -> '.join(exc.args[1])}")
