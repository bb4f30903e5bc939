"""The advisor's recommendations as rich renderables: shown by `pgq-top advise` and the dashboard's
advisor screen (key A). Text from the database is rendered as rich Text, never markup."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pgq_tui.monitor.advice import Advice
from pgq_tui.monitor.health import bloat_verdicts
from pgq_tui.monitor.provenance import index_notes
from pgq_tui.monitor.snapshot import Snapshot


def render(advice: Advice, snap: Snapshot) -> Group:
    parts: list[object] = [
        Text.assemble(("advice for ", "bold"), (advice.table, "bold"), ("  measured: ", "dim"), advice.basis)
    ]
    for v in bloat_verdicts(snap):
        parts.append(Text(f"{v.level}: {v.message}", style="bold red" if v.level == "crit" else "yellow"))
    if advice.recommendations:
        t = Table(expand=False, show_lines=True)
        for col in ("scope", "setting", "now", "recommended", "why"):
            t.add_column(col, overflow="fold")
        for r in advice.recommendations:
            t.add_row(r.scope, r.name, Text(r.current), Text(r.value, style="bold"), Text(r.reason))
        parts.append(t)
    else:
        parts.append(Text("no setting to change", style="green"))
    for note in advice.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    for note in index_notes(snap):  # optional: the figures are read by scans meanwhile
        parts.append(Text(f"index: {note}", style="dim"))
    if advice.table_sql:
        parts.append(Text("\n-- per table (pgq-top can apply it: dashboard key A)", style="dim"))
        parts.append(Text(advice.table_sql + ";"))
    if advice.server_sql:
        parts.append(Text("\n-- server-wide, for the DBA (superuser):", style="dim"))
        parts.extend(Text(line + ";") for line in advice.server_sql)
    return Group(*parts)  # type: ignore[arg-type]
