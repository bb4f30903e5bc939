"""The architecture's contracts (pyproject.toml [tool.importlinter], docs/architecture.md) hold on the
real tree, and each one breaks on a deliberately wrong import: a copy of the package with one import
added, checked by the real `lint-imports` (no mocks). A contract that could not fail would hold nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
    "lint-imports"
)

# contract id -> (module file to edit, the wrong import added to it)
WRONG: dict[str, tuple[str, str]] = {
    "layers": ("monitor/health.py", "import pgq_tui.actions.actions"),
    "db-floor": ("db/connect.py", "import pgq_tui.dialects.catalog"),
    "dialects-below-engine": ("dialects/catalog.py", "import pgq_tui.monitor.snapshot"),
    "dialects-independent": ("dialects/graphile/dialect.py", "import pgq_tui.dialects.pgq.dialect"),
    "jobtable-shared": ("jobtable/schema.py", "import pgq_tui.queue.job"),
    "monitor-not-detection": ("monitor/collect.py", "import pgq_tui.detection"),
    "fleet-not-check": ("fleet/rows.py", "import pgq_tui.check.rules"),
    "tui-not-cli": ("tui/screens/advice.py", "import pgq_tui.commands.advise"),
    "textual-in-tui-only": ("monitor/health.py", "import textual"),
    "acyclic": ("diagnosis/findings.py", "import pgq_tui.diagnosis.chains"),
}


def _lint(where: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    if LINT_IMPORTS is None:
        pytest.fail("lint-imports is not installed (pip install -e '.[test]')")
    args = [LINT_IMPORTS, "--no-cache", "--config", str(where / "pyproject.toml")]
    for c in contracts:
        args += ["--contract", c]
    # the copy's package first on the path: grimp reads the files of the pgq_tui that imports
    env = {"PYTHONPATH": str(where), "PATH": str(Path(sys.executable).parent), "COLUMNS": "200"}
    return subprocess.run(args, cwd=where, env=env, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "pgq_tui", tmp_path / "pgq_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_every_contract_is_exercised() -> None:
    """A contract added to pyproject.toml needs its wrong import here, and at least 4 exist."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ids = {c["id"] for c in config["tool"]["importlinter"]["contracts"]}
    assert ids == set(WRONG) and len(ids) >= 4


def test_the_real_tree_keeps_every_contract() -> None:
    proc = _lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Contracts: {len(WRONG)} kept, 0 broken." in proc.stdout


@pytest.mark.parametrize("contract", sorted(WRONG))
def test_a_wrong_import_breaks_its_contract(contract: str, tmp_path: Path) -> None:
    where = _copy(tmp_path)
    module, line = WRONG[contract]
    target = where / "pgq_tui" / module
    kept = _lint(where, contract)
    assert kept.returncode == 0, kept.stdout + kept.stderr  # the copy holds before the edit
    target.write_text(target.read_text() + f"\n{line}  # deliberately wrong\n")
    broken = _lint(where, contract)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "BROKEN" in broken.stdout and "1 broken" in broken.stdout, broken.stdout
    importer = "pgq_tui." + module.removesuffix(".py").replace("/", ".")
    imported = line.split()[1]
    said = broken.stdout.replace("\n", " ")
    # the report names the wrong import (the acyclic one names the cycle's package and the edge)
    assert importer.rsplit(".", 1)[-1] in said and imported.rsplit(".", 1)[-1] in said, broken.stdout
