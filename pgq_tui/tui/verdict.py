"""The one-line health verdict shown at every size: the monitor's verdicts, worst first, as rich Text."""

from __future__ import annotations

from rich.text import Text

from pgq_tui.monitor.health import verdicts
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.format import LEVEL_MARK, LEVEL_STYLE, safe

# Where to press to see the detail of a verdict (the panel's number key).
PANEL_KEY = {"queues": "1", "leases": "2", "dead": "4", "sessions": "5", "throughput": "6", "table": "7"}


def verdict_text(snap: Snapshot) -> Text:
    found = verdicts(snap)
    if not found:
        text = Text("✓ healthy", style=LEVEL_STYLE["ok"])
        if snap.table.vacuum is not None:
            text.append(f" · vacuum running ({snap.table.vacuum.phase})", style="dim")
        return text
    text = Text()
    for i, v in enumerate(found):
        if i:
            text.append(" · ", style="dim")
        key = PANEL_KEY.get(v.panel)
        text.append_text(safe(f"{LEVEL_MARK[v.level]} {v.message}", style=LEVEL_STYLE[v.level]))
        if key and i == 0:
            text.append(f" [{key}]", style="dim")
    return text
