"""Write deploy/grafana/pgq-top.json, the Grafana dashboard over `pgq-top exporter`'s metrics.

    python scripts/grafana_dashboard.py [--out deploy/grafana/pgq-top.json]

The panels are listed here rather than edited in the JSON, so the layout stays regular and a reviewer
reads the queries in one place; tests/test_deploy.py checks the committed JSON is this script's output
and that every metric a panel names is one a real exporter serves. Import the JSON in Grafana
(Dashboards > New > Import): it asks for the Prometheus data source (`DS_PROMETHEUS`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "deploy" / "grafana" / "pgq-top.json"
DS = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
SEL = 'instance=~"$instance", target=~"$target"'  # the dashboard's variables, on every per-queue series
INST = 'instance=~"$instance"'

# (title, type, unit, [(expr, legend)], description); width 8 or 12 or 24 of Grafana's 24 columns
Panel = tuple[str, str, str, list[tuple[str, str]], str, int]

# fmt: off
ROWS: list[tuple[str, list[Panel]]] = [
    (
        "Exporter",
        [
            ("Exporter reads the database", "stat", "none",
             [(f"pgq_up{{{INST}}}", "{{instance}}")],
             "1: the last collect read every queue; 0: pgq_last_error_code says why", 6),
            ("Last error code", "stat", "none",
             [(f"pgq_last_error_code{{{INST}}}", "{{instance}}")],
             "pgq-top's exit code of the last failed collect: 3 cannot connect, 4 table missing or "
             "no queue, 5 privilege; 0 when it worked", 6),
            ("Queues read", "stat", "none",
             [(f"pgq_queue_up{{{SEL}}}", "{{kind}} {{target}}")], "1 per queue the last collect read", 6),
            ("Collect cost and errors", "timeseries", "s",
             [(f"pgq_collect_duration_seconds{{{SEL}}}", "collect {{target}}"),
              (f"rate(pgq_collect_errors_total{{{INST}}}[$__rate_interval])", "errors/s {{instance}}")],
             "How long one collect takes (the poll's cost on the database), and failed collects", 6),
        ],
    ),
    (
        "Jobs",
        [
            ("Jobs by state", "timeseries", "short",
             [(f"sum by (kind, target, state) (pgq_jobs{{{SEL}, state!=\"done\"}})",
               "{{state}} {{target}}")],
             "Absent, not 0, when a count was not taken (no series: the gap is the truth)", 12),
            ("Stuck jobs", "timeseries", "short",
             [(f"pgq_stuck_jobs{{{SEL}}}", "{{kind}} {{target}}")],
             "Stuck by the framework's own rule (pgq_queue_info's stuck_rule)", 12),
            ("Oldest ready job's wait", "timeseries", "s",
             [(f"pgq_oldest_ready_job_age_seconds{{{SEL}}}", "{{queue}} {{target}}")],
             "0 when nothing waits; absent while unknown", 12),
            ("Rates (the monitor's own)", "timeseries", "ops",
             [(f"pgq_queue_rate_per_second{{{SEL}}}", "{{event}} {{queue}}")],
             "Per queue and event, any writer; absent while unknown", 12),
            ("Completed (counters table)", "timeseries", "ops",
             [(f"sum by (target, queue) (rate(pgq_queue_jobs_completed_total{{{SEL}}}[$__rate_interval]))",
               "{{queue}} {{target}}")],
             "From pgq-top's per-second counters table (pgq-top's own queue only)", 12),
            ("Dead jobs", "timeseries", "short",
             [(f"pgq_jobs{{{SEL}, state=\"dead\"}}", "{{queue}} {{target}}"),
              (f"rate(pgq_jobs_dead_total{{{SEL}}}[$__rate_interval])", "new/s {{target}}")],
             "Jobs that ran out of attempts; the rate only where a counters table exists", 12),
            ("Inexact counts and background lag", "timeseries", "s",
             [(f"pgq_background_count_lag_seconds{{{SEL}}}", "lag {{target}}"),
              (f"count by (target) (pgq_jobs_exact{{{SEL}}} == 0)", "inexact counts {{target}}")],
             "Above the per-poll count cap a background exact count serves pgq_jobs; this is its age", 24),
        ],
    ),
    (
        "Table and vacuum",
        [
            ("Dead tuples over autovacuum's threshold", "timeseries", "percentunit",
             [(f"pgq_table_dead_tuples{{{SEL}}} / pgq_table_autovacuum_threshold{{{SEL}}}", "{{table}}")],
             "1 = autovacuum is due; far above and rising: something holds the xmin horizon", 8),
            ("Table and index size", "timeseries", "bytes",
             [(f"pgq_table_size_bytes{{{SEL}}}", "heap {{table}}"),
              (f"pgq_table_index_size_bytes{{{SEL}}}", "indexes {{table}}")], "", 8),
            ("Vacuums", "timeseries", "short",
             [(f"pgq_table_vacuum_running{{{SEL}}}", "running {{table}}"),
              (f"increase(pgq_table_autovacuums_total{{{SEL}}}[$__rate_interval])", "autovacuums {{table}}"),
              (f"pgq_table_last_vacuum_age_seconds{{{SEL}}} / 3600", "hours since vacuum {{table}}")],
             "", 8),
        ],
    ),
    (
        "Sessions",
        [
            ("xmin horizon age", "timeseries", "s",
             [(f"pgq_xmin_horizon_age_seconds{{{INST}}}", "{{instance}}"),
              (f"pgq_idle_in_transaction_oldest_age_seconds{{{INST}}}", "oldest idle in transaction")],
             "How long the oldest xmin holder has held the horizon back (0: none)", 12),
            ("Sessions", "timeseries", "short",
             [(f"pgq_backends{{{INST}}}", "backends"),
              (f"pgq_idle_in_transaction_sessions{{{INST}}}", "idle in transaction"),
              (f"pgq_blocked_sessions{{{INST}}}", "waiting on a lock")], "", 12),
        ],
    ),
]
# fmt: on


def panel(pid: int, spec: Panel, x: int, y: int) -> dict[str, Any]:
    title, kind, unit, targets, description, width = spec
    return {
        "id": pid,
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"x": x, "y": y, "w": width, "h": 4 if kind == "stat" else 8},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}} if kind == "timeseries" else {},
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": DS, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(targets)
        ],
    }


def variable(name: str, query: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": name,
        "type": "query",
        "datasource": DS,
        "query": {"query": query, "refId": name},
        "definition": query,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
        "refresh": 2,
        "sort": 1,
    }


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y, pid = 0, 1
    for row, specs in ROWS:
        row_at = {"x": 0, "y": y, "w": 24, "h": 1}
        panels.append(
            {"id": pid, "type": "row", "title": row, "collapsed": False, "gridPos": row_at, "panels": []}
        )
        pid, y, x, height = pid + 1, y + 1, 0, 0
        for spec in specs:
            if x + spec[5] > 24:
                x, y = 0, y + height
            p = panel(pid, spec, x, y)
            panels.append(p)
            pid, x, height = pid + 1, x + spec[5], max(height, p["gridPos"]["h"])
        y += height
    return {
        "__inputs": [
            {
                "name": "DS_PROMETHEUS",
                "label": "Prometheus",
                "type": "datasource",
                "pluginId": "prometheus",
                "pluginName": "Prometheus",
            }
        ],
        "title": "pgq-top: PostgreSQL job queues",
        "uid": "pgq-top",
        "description": "pgq-top exporter's metrics (deploy/grafana in the pgq-top repository)",
        "tags": ["pgq-top", "postgresql", "queues"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                variable("instance", "label_values(pgq_up, instance)"),
                variable("target", 'label_values(pgq_queue_info{instance=~"$instance"}, target)'),
            ]
        },
        "annotations": {"list": []},
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
