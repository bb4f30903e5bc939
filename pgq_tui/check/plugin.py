"""The monitoring-plugins output format (Nagios, Icinga, Sensu, Zabbix's and Checkmk's plugin runners).

    PGQ CRITICAL: 12 stuck jobs (lease expired); queue emails: oldest ready 6m05s | 'stuck'=12;0;50;0 ...

One status line naming what is wrong, `|`, then perfdata items `'label'=value[UOM];warn;crit;min;max`
(https://www.monitoring-plugins.org/doc/guidelines.html#AEN200). An undetermined value is `U`.
Every further line repeats one problem each (the "long text"), so a long summary stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgq_tui.check.rules import EXIT_CODE, STATUS, Measure, Result, rank, worst
from pgq_tui.monitor.health import OK, fmt_age, fmt_count

SERVICE = "PGQ"


def fmt_number(value: float | None) -> str:
    """Plain decimal, never exponent notation; at most 4 decimals.

    >>> [fmt_number(v) for v in (None, 3, 2.0, 0.000123, 1234567.891, 1e-9)]
    ['', '3', '2', '0.0001', '1234567.891', '0']
    """
    if value is None:
        return ""
    if float(value).is_integer():
        return str(int(value))
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def quote_label(label: str) -> str:
    """Single-quoted, a quote doubled, `=` (not allowed in a label) replaced.

    >>> quote_label("orders:stuck"), quote_label("it's=x")
    ("'orders:stuck'", "'it''s_x'")
    """
    return "'" + label.replace("'", "''").replace("=", "_") + "'"


def perfdata_item(m: Measure, prefix: str = "") -> str:
    """
    >>> from pgq_tui.check.rules import Limit
    >>> perfdata_item(Measure("stuck", 12, limit=Limit(0, 50)))
    "'stuck'=12;0;50;0"
    >>> perfdata_item(Measure("poll_time", 0.0123, "s"), "orders:")
    "'orders:poll_time'=0.0123s;;;0"
    >>> perfdata_item(Measure("xmin_age", None, "s", Limit(300, 3600)))
    "'xmin_age'=U;300;3600;0"
    """
    value = "U" if m.value is None else fmt_number(m.value) + m.uom
    warn = fmt_number(m.limit.warn) if m.limit else ""
    crit = fmt_number(m.limit.crit) if m.limit else ""
    fields = [value, warn, crit, fmt_number(m.minimum), fmt_number(m.maximum)]
    return f"{quote_label(prefix + m.label)}=" + ";".join(fields).rstrip(";")


def _ok_summary(result: Result) -> str:
    by_label = {m.label: m for m in result.measures}

    def value(label: str) -> float | None:
        m = by_label.get(label)
        return m.value if m is not None else None

    def unsupported(label: str) -> bool:
        m = by_label.get(label)
        return m is not None and m.unsupported is not None

    def count(label: str) -> str:
        if unsupported(label):
            return f"{label} unsupported"
        n = value(label)
        return f"{label} unknown" if n is None else f"{fmt_count(n)} {label}"  # never a made-up 0

    oldest = "unsupported" if unsupported("oldest_ready_age") else fmt_age(value("oldest_ready_age"))
    return f"{count('ready')}, {count('running')}, oldest ready {oldest}, {count('stuck')}, {count('dead')}"


def _problems(result: Result) -> list[str]:
    if result.error is not None:
        return [result.error]
    return [m.message for m in result.problems]


def _not_checked(result: Result, named: bool) -> str | None:
    """One long-text line naming the rules this queue's dialect cannot serve, and why (not OK, not
    an error: a monitoring system must not read them as either)."""
    if not result.unsupported:
        return None
    reasons: dict[str, list[str]] = {}
    for m in result.unsupported:
        reasons.setdefault(str(m.unsupported), []).append(m.label)
    what = "; ".join(f"{', '.join(labels)} ({why})" for why, labels in reasons.items())
    return f"{result.name}: unsupported: {what}" if named else f"unsupported for {result.kind}: {what}"


def render(results: Sequence[Result]) -> tuple[int, str]:
    """The exit code and the whole plugin output (status line, perfdata, long text)."""
    level = worst(r.level for r in results)
    named = len(results) > 1
    ordered = sorted(results, key=lambda r: -rank(r.level))  # stable: worst target first
    # the root causes first (pgq-top why's chains), each once: a database-wide cause is every queue's
    causes = list(
        dict.fromkeys((f"{r.name}: " if named else "") + line for r in ordered for _, line in r.causes)
    )
    lines = causes + [(f"{r.name}: " if named else "") + p for r in ordered for p in _problems(r)]
    if level != OK:
        summary = "; ".join(lines)
    elif named:
        summary = f"{len(results)} queues healthy: " + ", ".join(r.name for r in results)
    else:
        summary = _ok_summary(results[0])
    perf = " ".join(
        perfdata_item(m, f"{r.name}:" if named else "")
        for r in results
        for m in r.measures
        if m.unsupported is None  # absent, not a made-up 0
    )
    out = f"{SERVICE} {STATUS[level]}: {summary}" + (f" | {perf}" if perf else "")
    notes = [note for r in results if (note := _not_checked(r, named)) is not None]
    long_text = (lines if len(lines) > 1 else []) + notes
    if long_text:
        out += "\n" + "\n".join(long_text)
    return EXIT_CODE[level], out


def as_json(results: Sequence[Result]) -> dict[str, Any]:
    """`check --json`: the verdicts and measures of every target."""
    level = worst(r.level for r in results)
    return {
        "status": STATUS[level],
        "exit_code": EXIT_CODE[level],
        "targets": [
            {
                "name": r.name,
                "kind": r.kind,
                "table": r.table,
                "status": STATUS[r.level],
                "error": r.error,
                "causes": [{"level": level, "line": line} for level, line in r.causes],
                "verdicts": [
                    {"level": m.level, "status": STATUS[m.level], "measure": m.label, "message": m.message}
                    for m in r.problems
                ],
                "measures": [
                    {
                        "label": m.label,
                        "value": m.value,
                        "uom": m.uom,
                        "warn": m.limit.warn if m.limit else None,
                        "crit": m.limit.crit if m.limit else None,
                        "level": m.level,
                        "unsupported": m.unsupported,
                    }
                    for m in r.measures
                ],
            }
            for r in results
        ],
    }
