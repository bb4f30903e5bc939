"""Sessions panel: idle-in-transaction sessions, xmin-horizon holders and lock blockers, with ages."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pgq_tui.monitor.figures import holder_reach
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.format import fmt_age_coarse, fmt_count, safe
from pgq_tui.tui.widgets.table import Column, PanelTable, Row, matches


def _pid(value: int | str) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _right(text: Text) -> Text:
    text.justify = "right"
    return text


class SessionsTable(PanelTable):
    TITLE = "5 Sessions"
    PANEL = "sessions"
    MARKABLE = True
    COLUMNS = (
        Column("pid", 7, right=True),
        Column("what", 9),
        Column("age", 7, right=True),
        Column("xmin", 6, right=True),
        Column("application", 18, wide_only=True),
        Column("query", None),
    )

    def _who(self, application: str | None, text: str) -> str:
        """Narrow tables have no application column: prefix it, it says whose session this is."""
        return text if self.wide else f"{application or '?'}: {text}"

    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        s = snap.sessions
        out: list[Row] = []
        qlimit = self.flex_width()
        for b in s.blocked:
            if matches(filter_text, b.blocking_pid, b.blocking_application, b.blocking_query):
                what = Text("blocker", style="bold red")
                cells = (
                    Text(str(b.blocking_pid), justify="right"),
                    what,
                    Text(fmt_age_coarse(b.blocked_wait_s), justify="right"),
                    Text("—", style="dim", justify="right"),
                    *([safe(b.blocking_application, limit=18)] if self.wide else []),
                    safe(
                        self._who(
                            b.blocking_application, f"blocks {b.blocked_pid}: {b.blocking_query or ''}"
                        ),
                        limit=qlimit,
                    ),
                )
                out.append(
                    Row(key=f"b:{b.blocking_pid}:{b.blocked_pid}", cells=cells, target=b.blocking_pid, info=b)
                )
        for x in s.idle_in_transaction:
            if matches(filter_text, x.pid, x.application, x.query, x.user):
                own = " (us)" if x.is_pgq_top else ""
                cells = (
                    Text(str(x.pid), justify="right"),
                    Text("idle-tx" + own, style="yellow"),
                    Text(fmt_age_coarse(x.xact_age_s), justify="right"),
                    Text(fmt_count(x.backend_xmin_age), justify="right"),
                    *([safe(x.application, limit=18)] if self.wide else []),
                    safe(self._who(x.application, x.query or ""), style="dim", limit=qlimit),
                )
                out.append(Row(key=f"i:{x.pid}", cells=cells, target=x.pid, info=x))
        for h in s.xmin_holders:
            if matches(filter_text, h.kind, h.name, h.detail):
                pid = _pid(h.name) if h.kind == "backend" else None
                label = {"backend": "xmin", "prepared transaction": "prepared", "replication slot": "slot"}
                cells = (
                    _right(safe(h.name, limit=7)),
                    Text(label.get(h.kind, h.kind[:9]), style="magenta"),
                    Text(fmt_age_coarse(h.age_s), justify="right"),
                    Text(fmt_count(h.xmin_age), justify="right"),
                    *([Text("—", style="dim")] if self.wide else []),
                    safe(" · ".join(x for x in (h.detail, holder_reach(h)) if x), style="dim", limit=qlimit),
                )
                out.append(Row(key=f"x:{h.kind}:{h.name}", cells=cells, target=pid, info=h))
        return out
