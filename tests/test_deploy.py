"""The operator's kit in deploy/ (docs/operations.md): the Prometheus rules pass their own unit tests under
`promtool`, the rules and the Grafana dashboard name only metrics a real exporter serves (scraped from
`pgq-top exporter` run against a seeded server), the systemd units pass `systemd-analyze verify`, and
the Nagios/Icinga definitions use only flags `pgq-top check` has."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from psycopg.conninfo import make_conninfo

from pgq_tui.queue import JobQueue

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "prometheus" / "pgq-top.rules.yml"
DASHBOARD = DEPLOY / "grafana" / "pgq-top.json"
PROMETHEUS_OWN = {"up"}  # the series Prometheus itself adds per scrape target


def require(tool: str, paths: tuple[str, ...], package: str) -> str:
    """The tool's path, or skip (fail under PGQ_REQUIRE_FRAMEWORKS=1, as CI runs)."""
    found = shutil.which(tool) or next((p for p in paths if os.path.exists(p)), None)
    if found is None:
        reason = f"{tool} is not installed (apt-get install -y {package})"
        if os.environ.get("PGQ_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(f"{reason} (PGQ_REQUIRE_FRAMEWORKS=1: the deploy/ checks must run)", pytrace=False)
        pytest.skip(reason)
    return found


def promtool() -> str:
    return require("promtool", ("/usr/bin/promtool",), "prometheus")


# --- PromQL: the metric names an expression reads --------------------------------------------------

KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
            "group_right", "inf", "nan"}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (functions, keywords, labels and strings left out).

    >>> sorted(metric_names('sum by (kind) (rate(pgq_jobs_dead_total{state="x"}[5m])) > 0 and on (a) pgq_up'))
    ['pgq_jobs_dead_total', 'pgq_up']
    >>> sorted(metric_names('pgq_a{x=~"$target"} / ignoring(table) pgq_b offset 5m > bool 3e2'))
    ['pgq_a', 'pgq_b']
    """
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings (label values, Grafana variables in them)
    s = re.sub(r"\$\{?\w+\}?", "5m", s)  # Grafana's variables outside strings: $__rate_interval
    s = re.sub(r"\{[^}]*\}", "", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", "", s)  # ranges and subqueries
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", s)  # label lists
    names = set()
    for m in re.finditer(r"(?<![\w.:])[A-Za-z_:][\w:]*", s):
        if m.group() in KEYWORDS or s[m.end() :].lstrip().startswith("("):
            continue  # a keyword, or a function or aggregation called
        names.add(m.group())
    return names


def test_metric_names_doctests() -> None:
    import doctest

    (test,) = doctest.DocTestFinder().find(metric_names, globs={"metric_names": metric_names})
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.tries == 2 and runner.failures == 0


def rule_exprs() -> dict[str, str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {r["alert"]: r["expr"] for g in groups for r in g["rules"]}


def dashboard_exprs() -> dict[str, str]:
    """Every panel's query, and the inner query of each variable's label_values()."""
    board = json.loads(DASHBOARD.read_text())
    exprs = {
        f"{p['title']} {t['refId']}": t["expr"]
        for p in board["panels"]
        if p["type"] != "row"
        for t in p["targets"]
    }
    for variable in board["templating"]["list"]:
        inner = re.fullmatch(r"label_values\((.*), \w+\)", variable["query"]["query"])
        assert inner, variable
        exprs[f"variable {variable['name']}"] = inner.group(1)
    return exprs


def grafana_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "grafana_dashboard", ROOT / "scripts" / "grafana_dashboard.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- Prometheus ------------------------------------------------------------------------------------


def test_the_rules_pass_promtool_check_and_their_unit_tests() -> None:
    tool = promtool()
    check = subprocess.run(
        [tool, "check", "rules", RULES.name], cwd=RULES.parent, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"SUCCESS: {len(rule_exprs())} rules found" in check.stdout
    tests = subprocess.run(
        [tool, "test", "rules", "pgq-top.rules.test.yml"], cwd=RULES.parent, capture_output=True, text=True
    )
    assert tests.returncode == 0 and "SUCCESS" in tests.stdout, tests.stdout + tests.stderr
    # every alert has a unit test that expects it to fire
    tested = yaml.safe_load((RULES.parent / "pgq-top.rules.test.yml").read_text())["tests"]
    fired = {t["alertname"] for case in tested for t in case["alert_rule_test"] if t["exp_alerts"]}
    assert fired == set(rule_exprs())


def test_the_dashboard_is_the_scripts_output_and_valid_promql(tmp_path: Path) -> None:
    assert DASHBOARD.read_text() == grafana_script().render(), "run python scripts/grafana_dashboard.py"
    # promtool parses every panel's query (as a recording rule; Grafana's variables given values)
    exprs = dashboard_exprs()
    rules = [
        {"record": f"pgq:check_{i}", "expr": re.sub(r"\$__rate_interval", "5m", e).replace("$", "")}
        for i, e in enumerate(exprs.values())
    ]
    path = tmp_path / "dashboard.rules.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))  # JSON is YAML
    check = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"SUCCESS: {len(rules)} rules found" in check.stdout and len(rules) > 20


def exporter_names(dsn: str) -> set[str]:
    """The sample names `pgq-top exporter` serves for a seeded pgq-top queue: ready jobs above the
    per-poll count cap (so the background count and its lag are served), done, dead, stuck, a vacuumed
    table, and rates (served from the second collect on)."""
    with JobQueue(dsn) as q:
        q.enqueue("emails", [{"n": i} for i in range(1200)])  # above the default count cap (1000)
        q.enqueue("reports", [{"n": i} for i in range(4)], max_attempts=1)
        claimed = q.claim("reports", limit=4)
        q.complete(claimed[:1], keep=True)
        q.fail(claimed[1], "boom")  # max_attempts=1: dead
        q.claim("emails", limit=2, lease=0.1)  # left to expire: stuck
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM jobs")  # so the last-vacuum age is served
    cmd = [sys.executable, "-m", "pgq_tui", "exporter", "--dsn", dsn, "--listen", "127.0.0.1:0",
           "--min-interval", "0.3"]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"http://\S+/metrics", line)
        assert url, line
        wanted = {"pgq_background_count_lag_seconds", "pgq_queue_rate_per_second", "pgq_stuck_jobs"}
        deadline, names = time.monotonic() + 40, set[str]()
        while not wanted <= names and time.monotonic() < deadline:
            time.sleep(0.5)
            with urllib.request.urlopen(url.group(0), timeout=10) as resp:
                body = resp.read().decode()
            names |= {s.name for f in text_string_to_metric_families(body) for s in f.samples}
        return names
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def served(server_dsn: str, template_db: str) -> Iterator[set[str]]:
    name = f"pgq_t_{uuid.uuid4().hex[:12]}"
    ident = psycopg.sql.Identifier(name)
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(
            psycopg.sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                ident, psycopg.sql.Identifier(template_db)
            )
        )
    try:
        yield exporter_names(make_conninfo(server_dsn, dbname=name))
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


def test_every_metric_the_rules_and_the_dashboard_name_is_served(served: set[str]) -> None:
    assert {"pgq_up", "pgq_jobs", "pgq_jobs_completed_total"} <= served  # the scrape worked
    for what, exprs in (("rule", rule_exprs()), ("panel", dashboard_exprs())):
        for name, expr in exprs.items():
            used = metric_names(expr)
            assert used, f"{what} {name} names no metric: {expr}"
            unknown = used - served - PROMETHEUS_OWN
            assert not unknown, f"{what} {name} names metrics the exporter does not serve: {sorted(unknown)}"
    # and the kit covers what the exporter is for
    used = set().union(*(metric_names(e) for e in rule_exprs().values()))
    assert {"pgq_stuck_jobs", "pgq_oldest_ready_job_age_seconds", "pgq_jobs", "pgq_collect_errors_total",
            "pgq_background_count_lag_seconds", "pgq_up"} <= used  # fmt: skip


# --- systemd ---------------------------------------------------------------------------------------

UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTALLED_AT = "/usr/local/bin/pgq-top"


def pgq_top_binary() -> str:
    """This environment's pgq-top: `verify` wants ExecStart to name an executable that exists."""
    here = Path(sys.executable).parent / "pgq-top"
    found = str(here) if here.exists() else shutil.which("pgq-top")
    assert found, "pgq-top is not installed in this environment (pip install -e .)"
    return found


def exec_start(unit: Path) -> list[str]:
    (line,) = [x for x in unit.read_text().splitlines() if x.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_the_units_start_pgq_top_with_real_flags_and_no_secret(unit: Path) -> None:
    from pgq_tui.cli import build_parser

    argv = exec_start(unit)
    assert argv[0] == INSTALLED_AT
    # the flags parse (argparse exits 2 on an unknown one)
    args = build_parser().parse_args(argv[1:])
    assert args.command in {"exporter", "record"}
    text = unit.read_text()
    assert "EnvironmentFile=/etc/pgq-top/pgq-top.env" in text
    assert "--dsn" not in argv and "password" not in text.lower().replace("its password", "")
    for hardening in (
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=\n",
    ):
        assert hardening in text


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_the_units_pass_systemd_analyze_verify_and_security(unit: Path, tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze") or (
        "/usr/bin/systemd-analyze" if os.path.exists("/usr/bin/systemd-analyze") else None
    )
    if tool is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package)")
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text().replace(f"ExecStart={INSTALLED_AT} ", f"ExecStart={pgq_top_binary()} "))
    verify = subprocess.run([tool, "verify", str(copy)], capture_output=True, text=True, timeout=60)
    out = verify.stdout + verify.stderr
    if verify.returncode != 0 and re.search(r"not been booted|Failed to (initialize|create) manager", out):
        pytest.skip(f"systemd-analyze cannot run here: {out.strip().splitlines()[0]}")
    assert verify.returncode == 0, out
    # warnings (an unknown or misspelt key is only a warning, exit 0) name the file: there must be none
    assert unit.name not in out and str(copy) not in out, out
    # systemd's own exposure score: 0 (locked down) to 10 (unprotected); these score 1.2, "OK"
    security = subprocess.run(
        [tool, "security", "--offline=yes", "--threshold=20", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert security.returncode == 0, security.stdout[-2000:] + security.stderr
    score = re.search(r"Overall exposure level for \S+: ([\d.]+)", security.stdout)
    assert score and float(score.group(1)) <= 2.0, security.stdout[-500:]


# --- Nagios and Icinga -----------------------------------------------------------------------------

NAGIOS = DEPLOY / "nagios" / "pgq-top.cfg"
ICINGA = DEPLOY / "nagios" / "pgq-top.conf"


def check_options() -> set[str]:
    from pgq_tui.cli import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {opt for action in sub.choices["check"]._actions for opt in action.option_strings}


def nagios_command_lines() -> dict[str, str]:
    blocks = re.findall(r"command_name\s+(\S+)\s*\n\s*command_line\s+(.+)", NAGIOS.read_text())
    return dict(blocks)


def icinga_arguments() -> list[tuple[str, str]]:
    text = re.sub(r"(?m)^\s*//.*$", "", ICINGA.read_text())
    return re.findall(r'"(--[a-z-]+)" = (?:\{\s*value = )?"([^"]*)"', text)


def test_the_nagios_and_icinga_definitions_use_only_flags_check_has() -> None:
    options = check_options()
    lines = nagios_command_lines()
    assert set(lines) == {"check_pgq_top", "check_pgq_top_kind"}
    used = {f for line in lines.values() for f in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line)}
    used |= {flag for flag, _ in icinga_arguments()}
    assert len(used) > 10 and used <= options, sorted(used - options)
    assert all(line.startswith(f"{INSTALLED_AT} check ") for line in lines.values())


def test_the_nagios_and_icinga_commands_run_against_a_server(dsn: str) -> None:
    """Each definition, its macros filled in as Nagios and Icinga would, checks a real database: OK."""
    from psycopg.conninfo import conninfo_to_dict

    server = conninfo_to_dict(dsn)
    with JobQueue(dsn) as q:
        q.enqueue("emails", [{"n": 1}])
    nagios = {"$HOSTADDRESS$": str(server["host"]), "$_HOSTPGPORT$": str(server.get("port", 5432)),
              "$ARG1$": str(server["dbname"]), "$ARG2$": str(server.get("user", "postgres"))}  # fmt: skip
    runs = []
    for name, line in nagios_command_lines().items():
        thresholds = {"$ARG3$": "0", "$ARG4$": "50", "$ARG5$": "300", "$ARG6$": "600", "$ARG7$": "0"}
        args = {**nagios, **({"$ARG3$": "pgq"} if name == "check_pgq_top_kind" else thresholds)}
        args.setdefault("$ARG8$", "off")
        for macro, value in args.items():
            line = line.replace(macro, value)
        assert "$" not in line, line
        runs.append(shlex.split(line))
    icinga = {"address": nagios["$HOSTADDRESS$"], "pgq_port": nagios["$_HOSTPGPORT$"],
              "pgq_database": nagios["$ARG1$"], "pgq_user": nagios["$ARG2$"], "pgq_timeout": "20",
              "pgq_stuck_crit": "50", "pgq_host": nagios["$HOSTADDRESS$"]}  # fmt: skip
    argv = [INSTALLED_AT, "check"]
    for flag, value in icinga_arguments():
        filled = re.sub(r"\$(\w+)\$", lambda m: icinga.get(m.group(1), m.group(0)), value)
        if "$" not in filled:  # Icinga leaves out an argument whose variable is unset
            argv += [flag, filled]
    runs.append(argv)
    for cmd in runs:
        done = subprocess.run([pgq_top_binary(), *cmd[1:]], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith("PGQ OK"), (cmd, done.stdout, done.stderr)
