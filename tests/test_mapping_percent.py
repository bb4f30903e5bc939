"""A `%` in a mapping's status values or queue name is text, like any other character: psycopg reads
every `%` of a statement it is given parameters with as a placeholder, so a value bound into the SQL
must not reach it bare (issue #29). `%%` must match `%%`, never the rows whose status is `%`."""

from __future__ import annotations

import json

import psycopg
import pytest

from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED

MAPPING = """\
kind = "pct"
queue_name = "ops%s 100%"
[table]
name = "tasks"
[columns]
id = "id"
status = "state"
error = "err"
[states]
ready = ["50%", "%(x)s"]
running = ["run%%"]
dead = ["%%"]
[retry]
status = "50%"
[discard]
delete = true
"""

# (id, state): the mapped values, and look-alikes a bare `%%` -> `%` would count instead
ROWS = [
    (1, "50%"),
    (2, "50%"),
    (3, "%(x)s"),
    (4, "run%%"),
    (5, "run%"),  # look-alike of running's run%%
    (6, "%%"),
    (7, "%"),  # look-alike of dead's %%
    (8, "%"),
]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_percent_in_status_values_and_queue_name(
    empty_dsn: str, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE tasks (id int PRIMARY KEY, state text NOT NULL, err text)")
        conn.execute("CREATE INDEX ON tasks (state)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO tasks (id, state, err) VALUES (%s, %s, 'boom')", ROWS)
        mapping = tmp_path / "pct.toml"
        mapping.write_text(MAPPING)
        args = ("--dsn", empty_dsn, "--mapping", str(mapping), "--kind", "pct")

        code, out, err = cli(capsys, "snapshot", "--json", *args)
        assert (code, err) == (EXIT_OK, ""), err
        snap = json.loads(out)
        (queue,) = snap["queues"]
        assert queue["queue"] == "ops%s 100%"
        assert (queue["ready"], queue["running"], queue["dead"]) == (3, 1, 1)
        assert snap["dead"]["total"] == 1 and [r["id"] for r in snap["dead"]["rows"]] == [6]

        # the actions' guards bind the same values: only the `%%` row is retried, never a `%` one
        code, out, err = cli(capsys, "retry", *args, "--ids", "6,7", "--yes")
        assert code == EXIT_OK and "retried 1 of" in out, err
        # and the `%` rows are not dead: nothing left to discard
        code, out, err = cli(capsys, "discard", *args, "--dead", "--yes")
        assert code == EXIT_REFUSED and "no job is dead" in err, (out, err)
        assert conn.execute("SELECT id, state FROM tasks ORDER BY id").fetchall() == [
            (1, "50%"),
            (2, "50%"),
            (3, "%(x)s"),
            (4, "run%%"),
            (5, "run%"),
            (6, "50%"),
            (7, "%"),
            (8, "%"),
        ]
