"""Pure formatting for the dashboard: numbers, ages, levels and untrusted text. No Textual here.

Everything a widget shows goes through these functions, so they are easy to test. Numbers, ages and
sizes come from `pgq_tui.monitor.health` (one formatter for the dashboard and `snapshot`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from rich.text import Text

# The monitor owns the shared formatters and thresholds; the dashboard re-exports them for its widgets.
from pgq_tui.monitor.health import fmt_age, fmt_age_coarse, fmt_bytes, fmt_count
from pgq_tui.monitor.health import latency_level as level
from pgq_tui.untrusted import visible

DASH = "—"
SPARK = "▁▂▃▄▅▆▇█"

# What json.dumps(ensure_ascii=False) leaves raw inside strings (it escapes C0 itself; the newlines
# that remain are its own indentation and must stay).
_UNESCAPED_BY_JSON = re.compile("[\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def safe(text: object | None, *, style: str = "", limit: int | None = None) -> Text:
    """Untrusted text as a rich Text: markup is never parsed and escapes are shown, not obeyed.

    >>> safe("[bold red]x[/]").plain
    '[bold red]x[/]'
    """
    if text is None:
        return Text(DASH, style="dim")
    shown = visible(text)
    if limit is not None and len(shown) > limit:
        shown = shown[: max(limit - 1, 0)] + "…"
    return Text(shown, style=style)


def payload_json(payload: Any) -> str:
    """Pretty JSON whose string contents cannot carry live control characters.

    json.dumps already escapes C0 controls; DEL, C1 and bidi overrides survive `ensure_ascii=False`,
    so they are escaped here too (the result is still valid JSON text).
    """
    text = json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return _UNESCAPED_BY_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def fmt_rate(per_s: float | None) -> str:
    """A per-second rate, short.

    >>> fmt_rate(0.04), fmt_rate(12.345), fmt_rate(2500)
    ('0/s', '12.3/s', '2.5k/s')
    """
    if per_s is None:
        return DASH
    if per_s < 0.05:
        return "0/s"
    if per_s < 1000:
        return f"{per_s:.1f}/s".replace(".0/s", "/s")
    return f"{fmt_count(per_s)}/s"


def fmt_ago(when: datetime | None, now: datetime) -> str:
    """A past event as "45s ago", "3m ago", "2h03m ago", relative to the server's clock (never the
    local one). Whole minutes from one minute on: "when did it happen" needs no more, and a label that
    changed every second would repaint its whole panel every second (bytes over a slow link).

    >>> from datetime import timedelta
    >>> t = datetime(2026, 1, 1)
    >>> [fmt_ago(t - timedelta(seconds=s), t) for s in (45, 185, 7380)], fmt_ago(None, t)
    (['45s ago', '3m ago', '2h03m ago'], 'never')
    """
    if when is None:
        return "never"
    return f"{fmt_age_coarse((now - when).total_seconds())} ago"


# Colour plus a symbol, so the level survives NO_COLOR and colour-blind eyes.
LEVEL_STYLE = {"ok": "green", "unknown": "yellow", "warn": "bold yellow", "crit": "bold red"}
LEVEL_MARK = {"ok": "", "unknown": "?", "warn": "!", "crit": "!!"}


def leveled(text: str, lvl: str) -> Text:
    return Text(LEVEL_MARK[lvl] + text, style=LEVEL_STYLE[lvl])


def sparkline(values: tuple[int, ...] | list[int], width: int = 12) -> str:
    """The last `width` values as block characters, scaled to their own maximum.

    >>> sparkline([0, 1, 2, 4, 8], width=5)
    '▁▂▃▅█'
    """
    tail = list(values)[-width:]
    if not tail:
        return ""
    top = max(tail)
    if top <= 0:
        return SPARK[0] * len(tail)
    return "".join(SPARK[min(len(SPARK) - 1, round(v / top * (len(SPARK) - 1)))] for v in tail)


__all__ = [
    "DASH",
    "fmt_age",
    "fmt_age_coarse",
    "fmt_ago",
    "fmt_bytes",
    "fmt_count",
    "fmt_rate",
    "level",
    "leveled",
    "payload_json",
    "safe",
    "sparkline",
    "visible",
]
