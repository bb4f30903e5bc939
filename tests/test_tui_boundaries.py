"""Layering: the core never imports Textual, and the dashboard never talks to the database itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

TUI = Path(__file__).resolve().parent.parent / "pgq_tui" / "tui"


def test_core_modules_do_not_import_textual() -> None:
    code = (
        "import sys, pgq_tui.cli, pgq_tui.monitor.collect, pgq_tui.actions, pgq_tui.demo, pgq_tui.queue;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_dashboard_imports_no_database_driver() -> None:
    """Writes go through pgq_tui.actions and reads through the Monitor: no psycopg, no SQL, in tui/."""
    offenders = []
    for path in TUI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "psycopg"]
    assert offenders == []


PACKAGE = TUI.parent


def _kinds() -> frozenset[str]:
    from pgq_tui.dialects import registry

    return frozenset(d.kind for d in registry.builtin())


def test_no_branch_on_a_dialect_name_outside_the_dialects() -> None:
    """What differs per framework is data in its QueueModel, not `if kind == "pgq"` in the engine
    (monitor, actions, CLI, TUI)."""
    kinds, offenders = _kinds(), []
    for path in PACKAGE.rglob("*.py"):
        if "dialects" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                parts = [node.left, *node.comparators]
                named = [p.value for p in parts if isinstance(p, ast.Constant) and p.value in kinds]
                offenders += [f"{path.name}:{node.lineno}: {n!r}" for n in named]
    assert offenders == []
