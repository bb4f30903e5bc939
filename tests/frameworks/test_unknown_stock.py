"""Unknown is never zero on each framework's stock schema (installed by its own tool, no index added),
with jobs in every state from its own client and a worker killed -9 during a slow job (acceptance.py):

- in `snapshot --json`, every count is a number with a known figure, or `null` with an `unknown` or
  `unsupported` figure and its reason, never a 0 for a count not taken; a count that is a number equals
  ground truth (or is a lower bound of it);
- a state no index serves is still counted: on these small tables by a scan in the poll (exact, with
  the index that would make it live as its note), so nothing is unknown for want of an index, and
  `check` is never UNKNOWN for that reason (a count that cannot be taken at all, a failed statement or
  a background scan past `--wait`, is covered by tests/test_unknown_figures.py);
- `check` never says OK while a count a rule rests on is unknown: that rule is UNKNOWN with perfdata `U`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK

from .acceptance import Driver, crash_during_slow_job
from .test_acceptance import FRAMEWORKS, SNAPSHOT_FIELDS

KNOWN = {"exact", "stale", "approximate", "at_least"}
RULES = {"stuck": "stuck", "dead": "dead"}  # check's rules -> the count each rests on


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return code, out


@pytest.mark.parametrize(("driver", "kind", "stuck_liveness", "live_liveness", "threshold"), FRAMEWORKS)
def test_stock_schema_never_reports_an_untaken_count_as_zero(
    driver: Any,
    kind: str,
    stuck_liveness: str,
    live_liveness: str,
    threshold: float | None,
    framework_dsn: str,
    processes: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver.version()  # skips, or fails under PGQ_REQUIRE_FRAMEWORKS=1, when the client is missing
    if threshold is not None:
        monkeypatch.setenv("PGQ_TOP_STALLED_AFTER", str(threshold))
    fw: Driver = driver(framework_dsn)
    fw.install()
    crash_during_slow_job(fw, processes)
    truth = Counter((queue, state) for _, queue, state in fw.truth())

    code, out = run(capsys, "snapshot", "--json", "--dsn", framework_dsn, "--kind", kind)
    snap = json.loads(out)
    assert code == EXIT_OK and snap["queues"]
    unknown: dict[str, str] = {}
    for q in snap["queues"]:
        for field, state in SNAPSHOT_FIELDS.items():
            value, figure = q[field], q["figures"].get(field)
            assert figure is not None, (q["queue"], field)  # every count says how it was obtained
            if value is None:
                assert figure["accuracy"] in ("unknown", "unsupported") and figure["reason"], (field, figure)
                if figure["accuracy"] == "unknown":
                    unknown[field] = figure["reason"]
            else:
                assert figure["accuracy"] in KNOWN, (field, figure)
                want = truth[(q["queue"], state)]
                assert value == want or (figure["accuracy"] != "exact" and value <= want), (q, field, want)
                if figure["source"] == "scan":  # no index serves it: counted by this poll, exact
                    assert figure["accuracy"] == "exact", (field, figure)
    assert {n for n in snap["unknown"] if n in SNAPSHOT_FIELDS} <= set(unknown)
    # the stock tables are small: whatever no index serves is counted by a scan in this poll
    assert not unknown, unknown

    code, out = run(
        capsys, "check", "--dsn", framework_dsn, "--kind", kind, "--json", "--ready-age-warn", "off"
    )
    doc = json.loads(out)
    (result,) = doc["targets"]
    measures = {m["label"]: m for m in result["measures"]}
    for label, field in RULES.items():
        m = measures[label]
        if field in unknown:  # a rule resting on a count not taken: UNKNOWN, no value, never OK
            assert (m["level"], m["value"]) == ("unknown", None), m
        elif m["unsupported"] is None:
            assert m["value"] is not None and m["level"] != "unknown", m
    if any(field in unknown for field in RULES.values()):
        assert code != 0 and doc["status"] != "OK", doc  # never "PGQ OK" while stuck or dead is unknown
    assert code != 3 and doc["status"] != "UNKNOWN", doc  # not UNKNOWN for want of an index
    code, out = run(capsys, "check", "--dsn", framework_dsn, "--kind", kind, "--ready-age-warn", "off")
    perf = dict(
        item.split("=", 1) for item in out.splitlines()[0].partition(" | ")[2].split(" ") if "=" in item
    )
    for label, field in RULES.items():
        if field in unknown:
            assert perf[f"'{label}'"].startswith("U;"), perf
        elif measures[label]["unsupported"] is None:
            assert not perf[f"'{label}'"].startswith("U;"), perf
