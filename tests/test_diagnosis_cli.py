"""`pgq-top why` as a command: exit codes, JSON, thresholds from a targets file, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from pgq_tui import cli
from pgq_tui.exitcodes import WHY_WARNING


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(["why", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_nothing_wrong_exits_0(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--dsn", dsn, "--window", "1", "--interval", "0.5")
    assert code == 0 and "nothing wrong" in out and "polls over 1 s" in out


def test_json_and_thresholds_from_a_targets_file(
    dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = psycopg.connect(dsn, application_name="report")
    try:
        holder.execute("SELECT txid_current()")
        pid = holder.info.backend_pid
        targets = tmp_path / "targets.toml"
        dsn_toml = json.dumps(dsn)  # a TOML basic string is a JSON string
        targets.write_text(
            f"[targets.shop]\ndsn = {dsn_toml}\n\n[diagnosis]\nxmin_hold_s = 0\nmin_duration_s = 0\n"
        )
        code, out, _ = run(capsys, "--targets", str(targets), "--window", "0", "--json")
        doc = json.loads(out)
        assert doc["thresholds"]["xmin_hold_s"] == 0.0
        (q,) = doc["queues"]
        roots = {c["root"]: c for c in q["chains"]}
        chain = roots[f"xmin:backend:{pid}"]
        assert chain["fix"]["key"] == "K" and f"pid {pid}" in chain["line"]
        assert chain["links"][-1]["pid"] == pid
        assert code == doc["exit_code"] == WHY_WARNING
        # the command line wins over the file
        code, out, _ = run(capsys, "--targets", str(targets), "--window", "0", "--xmin-hold", "3600")
        assert code == 0 and "nothing wrong" in out
    finally:
        holder.close()


def test_bad_input_is_one_line(dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    targets = tmp_path / "targets.toml"
    targets.write_text(f"[targets.shop]\ndsn = {json.dumps(dsn)}\n\n[diagnosis]\nmin_duration = 3\n")
    code, out, err = run(capsys, "--targets", str(targets))
    assert code == 2 and "unknown key 'min_duration'" in err and len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "--dsn", "host=/nonexistent dbname=x", "--window", "0", "--timeout", "5")
    assert code == 3 and "cannot" in out and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["why", "--dsn", dsn, "--min-duration", "-1"])
    assert exc.value.code == 2
