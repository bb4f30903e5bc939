"""A mapping file that would be misread is refused: one line naming the file, the line and the key,
a usage exit code, no traceback (the CLI in a subprocess, against a real server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from dialect_cases.seed import SEED_JOBS

from pgq_tui.errors import EXIT_USAGE

GOOD = """\
kind = "billing-jobs"
[table]
name = "jobs"
[columns]
id = "id"
queue = "queue"
status = "status"
run_at = "run_at"
attempts = "attempts"
lease = "locked_until"
[states]
ready = ["pending"]
running = ["running"]
dead = ["failed"]
done = ["done"]
[stuck]
rule = "lease"
[retry]
status = "pending"
reset_attempts = true
[discard]
delete = true
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgq_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


# (what the user wrote instead of GOOD's line, the line it replaces, what the error says)
BAD = [
    ("ready = []", "ready = [", "states.ready is empty"),
    (
        'extra = { queue = ["parked"] }',
        "done = [",
        "states.extra: label 'queue' is taken",
    ),
    (
        'delete = "no"',
        "delete = ",
        "discard.delete must be true or false (a TOML boolean, unquoted), not 'no'",
    ),
    (
        'reset_attempts = "false"',
        "reset_attempts = ",
        "retry.reset_attempts must be true or false (a TOML boolean, unquoted), not 'false'",
    ),
    (
        'kind = "seed-jobs"',
        "kind = ",
        "kind 'seed-jobs' is a built-in kind; give your mapping a kind of its own",
    ),
    ('kind = "pgq"', "kind = ", "kind 'pgq' is a built-in kind"),
    ("ready = [pending]", "ready = [", "not valid TOML (Invalid value)"),
    ("[requeu]", "[stuck]", "unknown key 'requeu' in the top level"),
]


@pytest.mark.parametrize(("wrote", "instead_of", "message"), BAD, ids=[b[2][:32] for b in BAD])
def test_a_bad_mapping_is_one_line_with_its_file_and_line(
    empty_dsn: str, tmp_path: Path, wrote: str, instead_of: str, message: str
) -> None:
    lines = GOOD.splitlines()
    at = line_of(GOOD, instead_of)
    lines[at - 1] = wrote if instead_of != "done = [" else lines[at - 1] + "\n" + wrote
    text = "\n".join(lines) + "\n"
    at = line_of(text, wrote)
    path = tmp_path / "billing.toml"
    path.write_text(text)
    proc = run("snapshot", "--dsn", empty_dsn, "--mapping", str(path))
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"mapping {path}:{at}: {message}" in proc.stderr, proc.stderr


def test_a_table_named_by_a_string_is_refused(empty_dsn: str, tmp_path: Path) -> None:
    """`table = "jobs"` used to be ignored, so every table with the mapped columns matched."""
    text = GOOD.replace('[table]\nname = "jobs"\n', "").replace(
        'kind = "billing-jobs"\n', 'kind = "b"\ntable = "jobs"\n'
    )
    path = tmp_path / "b.toml"
    path.write_text(text)
    proc = run("snapshot", "--dsn", empty_dsn, "--mapping", str(path))
    assert proc.returncode == EXIT_USAGE and proc.stderr.count("\n") == 1
    assert (
        f"mapping {path}:2: table must be a table ([table] with its keys below), not 'jobs'" in proc.stderr
    ), proc.stderr


def test_an_index_that_excludes_a_state_does_not_serve_it(empty_dsn: str, tmp_path: Path) -> None:
    """`WHERE status <> 'done'` names 'done' but holds every row except the done ones: done is not
    counted through it (a scan, with the `= 'done'` index as advice), while a real `= 'done'` index
    serves it."""
    path = tmp_path / "billing.toml"
    path.write_text(GOOD)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute("CREATE INDEX jobs_not_done ON jobs (queue) WHERE status <> 'done'")
        conn.execute("INSERT INTO jobs (queue, status) VALUES ('q', 'done'), ('q', 'done'), ('q', 'pending')")
    proc = run("snapshot", "--dsn", empty_dsn, "--mapping", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (queue,) = [q for q in doc["queues"] if q["queue"] == "q"]
    done = queue["figures"]["done"]
    assert queue["ready"] == 1 and queue["done"] == 2 and "done" not in doc["unsupported"]
    assert "WHERE status = 'done'" in (done["note"] or ""), done  # scanned, the right index advised
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("CREATE INDEX jobs_done ON jobs (queue) WHERE status = 'done'")
    doc = json.loads(run("snapshot", "--dsn", empty_dsn, "--mapping", str(path), "--json").stdout)
    (queue,) = [q for q in doc["queues"] if q["queue"] == "q"]
    assert queue["done"] == 2 and "done" not in doc["unsupported"]
    assert "CREATE INDEX" not in (queue["figures"]["done"]["note"] or "")  # served by the new index
