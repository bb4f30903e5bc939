"""One place for each fact: the reference pages say what the code does, and the code keeps each fact
in one module.

- docs/exit-codes.md is pgq_tui/exitcodes.py: every scheme's codes and names;
- docs/environment.md lists every environment variable the package reads (an AST walk of pgq_tui
  finds them), and the tests' too; the old names still work;
- `pgq-top --version`, the JSON's `version`, the package metadata and the CHANGELOG's top version agree;
- docs/legend.md lists every mark the screen code prints.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import warnings
from importlib import metadata
from pathlib import Path

import psycopg
import pytest

from pgq_tui import __version__, env, exitcodes
from pgq_tui.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PACKAGE = ROOT / "pgq_tui"


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first table under `heading` (a `## ` heading), as stripped cells."""
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:] if not set(row) <= {"|", "-"}]


# --- exit codes ---------------------------------------------------------------------------------


def _first_table(text: str, heading: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for cells in table_rows(text, heading):
        if not cells[0].isdigit():
            break
        out[int(cells[0])] = cells[1]
    return out


def test_the_exit_code_page_is_the_code_s_own_table() -> None:
    text = (DOCS / "exit-codes.md").read_text()
    assert _first_table(text, "pgq-top's scheme") == exitcodes.GENERAL
    assert _first_table(text, "`check`: monitoring-plugins") == exitcodes.CHECK
    assert _first_table(text, "`why`: what it found") == exitcodes.WHY


def test_the_schemes_are_the_ones_the_commands_use() -> None:
    from pgq_tui import errors
    from pgq_tui.check.rules import CRIT, EXIT_CODE, OK, UNKNOWN, WARN
    from pgq_tui.diagnosis.chains import WHY_EXIT

    assert EXIT_CODE == {OK: 0, WARN: 1, CRIT: 2, UNKNOWN: 3}
    assert set(EXIT_CODE.values()) == set(exitcodes.CHECK)
    assert set(WHY_EXIT.values()) == set(exitcodes.WHY)
    # why's findings never read as a failure: not a code of pgq-top's scheme
    assert not (set(exitcodes.WHY) - {exitcodes.WHY_OK}) & set(exitcodes.GENERAL)
    # errors.py hands out the same numbers under the names its callers import
    for name in dir(exitcodes):
        if name.startswith("EXIT_") and hasattr(errors, name):
            assert getattr(errors, name) == getattr(exitcodes, name), name


def test_why_s_usage_error_is_not_one_of_its_findings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["why", "--window", "soon"])
    assert exc.value.code == exitcodes.EXIT_USAGE and exc.value.code not in exitcodes.WHY


# --- environment variables ----------------------------------------------------------------------

ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|HOME")


def _documented_variables() -> set[str]:
    text = (DOCS / "environment.md").read_text()
    return set(re.findall(r"`([A-Z][A-Z0-9_]+)`", text))


def _read_in_package() -> dict[str, set[str]]:
    """Every variable name the package reads, by file: literal arguments of env.get(), of
    `environ.get(...)`/`environ[...]` on any mapping, every PGQ_* string constant (a Setting's
    override, a constant naming a variable), and any direct use of os.environ / os.getenv."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        own = rel == "pgq_tui/env.py"  # the one module that touches os.environ
        tree = ast.parse(path.read_text())
        names: set[str] = set()
        for node in ast.walk(tree):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and value.startswith("PGQ_") and ENV_NAME.fullmatch(value):
                names.add(value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = ast.unparse(node.func.value)
                if node.func.attr == "get" and (target == "env" or target.endswith("environ")) and node.args:
                    arg = node.args[0]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        names.add(arg.value)
                if node.func.attr == "getenv":
                    names.add(f"<getenv in {rel}>")
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ") and not own:
                key = node.slice
                names.add(key.value if isinstance(key, ast.Constant) else f"<environ[...] in {rel}>")
            if isinstance(node, ast.Attribute) and ast.unparse(node) == "os.environ" and not own:
                names.add(f"<os.environ in {rel}>")
        if names:
            found[rel] = names
    return found


def test_every_variable_the_package_reads_is_in_the_table_and_read_through_env() -> None:
    found = _read_in_package()
    read = set().union(*found.values())
    assert "PGQ_TOP_POOLER" in read and "DATABASE_URL" in read  # the walk finds them at all
    assert not {n for n in read if n.startswith("<")}, found  # os.environ only in pgq_tui/env.py
    documented = _documented_variables()
    assert not read - documented, sorted(read - documented)
    table = {v.name for v in env.VARIABLES}
    olds = {old for v in env.VARIABLES for old in v.old}
    from pgq_tui.dialects import registry

    settings = {s.env for s in registry.settings(registry.builtin())}
    assert read <= table | olds | settings, sorted(read - table - olds - settings)
    assert table | olds | settings <= documented


def test_the_old_names_are_the_page_s() -> None:
    rows = table_rows((DOCS / "environment.md").read_text(), "Old names (deprecated)")
    page = {old.strip("`"): new.strip("`") for old, new in rows}
    assert page == {old: v.name for v in env.VARIABLES for old in v.old}


def test_every_variable_the_tests_and_ci_read_is_in_the_developer_section() -> None:
    text = (DOCS / "environment.md").read_text()
    developer = set(re.findall(r"`(PGQ_[A-Z0-9_]+)`", text.split("## For developers", 1)[1]))
    pattern = re.compile(
        # a name, not a prefix (tests/docs_examples.py drops every "PGQ_TOP_..." from its environment)
        r"""["'](PGQ_[A-Z0-9_]*[A-Z0-9])["']|process\.env\.(PGQ_[A-Z0-9_]+)|Getenv\("(PGQ_[A-Z0-9_]+)"\)"""
        r"|\b(PGQ_[A-Z0-9_]+)="
    )
    used: set[str] = set()
    files = [ROOT / ".ci" / "run"]
    for folder in ("tests", "benchmarks", "scripts"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".js", ".go", ".sh")]
    for path in files:
        if "node_modules" in path.parts or not path.is_file():
            continue
        for m in pattern.finditer(path.read_text(errors="replace")):
            used.add(next(g for g in m.groups() if g))
    ours = {v.name for v in env.VARIABLES} | {o for v in env.VARIABLES for o in v.old}
    from pgq_tui.dialects import registry

    ours |= {s.env for s in registry.settings(registry.builtin())}
    assert {"PGQ_TEST_DSN", "PGQ_TEST_PGBIN", "PGQ_REQUIRE_FRAMEWORKS"} <= used
    assert not used - ours - developer, sorted(used - ours - developer)


def test_an_old_name_still_sets_the_variable_on_a_real_connection(
    dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PGQ_POOLER (until 0.1) still forces the pooled path, with a DeprecationWarning; the new name
    wins when both are set."""
    from pgq_tui.db import connect

    monkeypatch.setattr(env, "_warned", set())
    monkeypatch.delenv("PGQ_TOP_POOLER", raising=False)
    monkeypatch.setenv("PGQ_POOLER", "transaction")
    with pytest.warns(DeprecationWarning, match="PGQ_POOLER is deprecated: set PGQ_TOP_POOLER"):
        conn = connect(dsn, application_name="pgq-top env test")
    with conn:
        assert (conn.link.mode, conn.link.pooled) == ("transaction", True)  # type: ignore[attr-defined]
        assert conn.prepare_threshold is None  # the careful path: nothing prepared
    monkeypatch.setenv("PGQ_TOP_POOLER", "none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name is read first: no warning
        conn = connect(dsn, application_name="pgq-top env test")
    with conn:
        assert (conn.link.mode, conn.link.pooled) == ("none", False)  # type: ignore[attr-defined]


# --- versions -----------------------------------------------------------------------------------


def test_the_package_pyproject_metadata_and_changelog_agree() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    top = re.search(r"^## (\d+\.\d+\.\d+)\b", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert top is not None
    assert project["version"] == __version__ == top.group(1) == metadata.version("pgq-top")


def test_version_flag_and_every_json_document_carry_the_package_version(
    dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"pgq-top {__version__}\n"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (queue, payload) VALUES ('emails', '{}')")
    commands = [
        ["snapshot", "--json", "--dsn", dsn],
        ["snapshot", "--json", "--dsn", dsn, "--dsn", dsn],  # the fleet's document
        ["check", "--json", "--dsn", dsn],
        ["why", "--json", "--dsn", dsn, "--window", "0"],
        ["jobs", "--json", "--dsn", dsn, "--where", "queue:emails"],
        ["advise", "--json", "--dsn", dsn, "--seconds", "0"],
        ["schedules", "--json", "--dsn", dsn],
    ]
    for argv in commands:
        capsys.readouterr()
        code = main(argv)
        doc = json.loads(capsys.readouterr().out)
        # check and why judge the queue (an idle session elsewhere may warn); the rest succeed
        allowed = {"check": set(exitcodes.CHECK), "why": set(exitcodes.WHY)}.get(argv[0], {0})
        assert code in allowed, (argv, code)
        assert next(iter(doc)) == "version" and doc["version"] == __version__, argv


# --- the legend ---------------------------------------------------------------------------------


def test_the_legend_lists_every_mark_the_screen_prints() -> None:
    from pgq_tui.monitor.health import fmt_figure, fmt_wait
    from pgq_tui.monitor.snapshot import ACCURACIES
    from pgq_tui.tui.fleet import MARK
    from pgq_tui.tui.format import DASH, LEVEL_MARK

    legend = (DOCS / "legend.md").read_text()
    shown = set(re.findall(r"`([^`]+)`", legend))
    # each accuracy: its row's example, as the screen formats it, and its JSON word
    examples = {"exact": 12, "stale": 12, "at_least": 1000, "approximate": 1200}
    for accuracy in ACCURACIES:
        assert fmt_figure(examples.get(accuracy), accuracy) in shown, accuracy
        assert f'`accuracy: "{accuracy}"`' in legend, accuracy
    assert {fmt_wait(65), fmt_wait(4200, "stale"), fmt_wait(None, "unknown"), fmt_wait(None)} <= shown
    marks = {m for m in (*LEVEL_MARK.values(), *MARK.values()) if m} | {DASH, "…", "(?)", "10 of ?"}
    assert marks <= shown, sorted(marks - shown)
