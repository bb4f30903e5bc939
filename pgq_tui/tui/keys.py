"""Every key the dashboard answers to, in one list. The footer and the help screen are generated from
these bindings, so what a key does and what the help says can never drift apart.
"""

from __future__ import annotations

from textual.binding import Binding

# Help-screen sections. Not Binding.Group: the footer would fold a group into one unlabelled chip.
VIEW = "View"
PANELS = "Panels"
FIX = "Fix (writes, always confirmed)"
DEMO = "Demo controls"
REPLAY = "Replay (time cursor)"
SECTIONS = (VIEW, REPLAY, PANELS, FIX, DEMO)

# Actions that write to the database: absent (not just greyed out) with --read-only.
WRITE_ACTIONS = frozenset(
    {"requeue", "reap", "retry", "discard", "cancel", "terminate", "pause_queue", "resume_queue"}
)
DEMO_ACTIONS = frozenset(
    {
        "demo_add_worker",
        "demo_remove_worker",
        "demo_raise_load",
        "demo_lower_load",
        "demo_crash",
        "demo_idle_tx",
        "demo_slow",
    }
)

PANEL_IDS = ("queues", "stuck", "leases", "dead", "sessions", "chart", "health")

_SECTIONED: list[tuple[str, Binding]] = [
    (VIEW, Binding("question_mark", "help", "Help", key_display="?")),
    (VIEW, Binding("q", "quit", "Quit")),
    # Priority (handled before the key is forwarded to a widget): the keys typed right after `/` or
    # `2` in the same read (SSH) must reach the filter box or the new panel, not the old focus.
    (VIEW, Binding("slash", "filter", "Filter / search", key_display="/", priority=True)),
    (VIEW, Binding("escape", "clear_filter", "Clear filter/marks", show=False)),
    (VIEW, Binding("p", "pause", "Pause")),
    (VIEW, Binding("plus,equals_sign", "interval(1)", "Slower refresh", show=False, key_display="+")),
    (VIEW, Binding("minus", "interval(-1)", "Faster refresh", show=False, key_display="-")),
    (VIEW, Binding("f5,ctrl+r", "refresh", "Refresh now", show=False)),
    (VIEW, Binding("v", "queue_detail", "Queue detail: how each figure was obtained", show=False)),
    (VIEW, Binding("y", "why", "Why: each problem from symptom to root cause, evidence and fix", show=False)),
    (VIEW, Binding("S", "schedules", "Schedules: last and next run, which are late", show=False)),
    (VIEW, Binding("c", "chart_window", "Chart window: 1 min, 10 min, 1 h", show=False)),
    (PANELS, Binding("tab", "cycle_panel(1)", "Next panel", show=False, priority=True)),
    (PANELS, Binding("shift+tab", "cycle_panel(-1)", "Previous panel", show=False, priority=True)),
    *[
        (
            PANELS,
            Binding(
                str(i), f"focus_panel('{panel}')", f"{panel.capitalize()} panel", show=False, priority=True
            ),
        )
        for i, panel in enumerate(PANEL_IDS, 1)
    ],
    (PANELS, Binding("space", "mark", "Mark row", key_display="space")),
    (FIX, Binding("r", "requeue", "Requeue stuck")),
    (FIX, Binding("R", "reap", "Reap all stuck", show=False)),
    (FIX, Binding("t", "retry", "Retry dead", show=False)),
    (FIX, Binding("D", "discard", "Discard dead", show=False)),
    (FIX, Binding("C", "cancel", "Cancel query", show=False)),
    (FIX, Binding("K", "terminate", "Terminate session", show=False)),
    (FIX, Binding("P", "pause_queue", "Pause the queue (the framework's own pause)", show=False)),
    (FIX, Binding("U", "resume_queue", "Resume the paused queue", show=False)),
    (FIX, Binding("A", "advise", "Autovacuum advisor (apply: confirmed)", show=False)),
    (DEMO, Binding("w", "demo_add_worker", "Add worker", show=False)),
    (DEMO, Binding("W", "demo_remove_worker", "Remove worker", show=False)),
    (DEMO, Binding("l", "demo_raise_load", "Raise load", show=False)),
    (DEMO, Binding("L", "demo_lower_load", "Lower load", show=False)),
    (DEMO, Binding("x", "demo_crash", "Crash a worker (kill -9)", show=False)),
    (DEMO, Binding("i", "demo_idle_tx", "Open/close idle-in-tx session", show=False)),
    (DEMO, Binding("s", "demo_slow", "Slow handler on/off", show=False)),
]

# Only `pgq-top replay` binds these (tui/replay.py); there the write, demo and refresh keys are absent.
_REPLAY: list[tuple[str, Binding]] = [
    (REPLAY, Binding("left_square_bracket", "step(-1)", "Previous poll", key_display="[")),
    (REPLAY, Binding("right_square_bracket", "step(1)", "Next poll", key_display="]")),
    (REPLAY, Binding("left_curly_bracket", "jump(-60)", "Back 1 minute", show=False, key_display="{")),
    (REPLAY, Binding("right_curly_bracket", "jump(60)", "Forward 1 minute", show=False, key_display="}")),
    (REPLAY, Binding("less_than_sign", "jump(-600)", "Back 10 minutes", show=False, key_display="<")),
    (REPLAY, Binding("greater_than_sign", "jump(600)", "Forward 10 minutes", show=False, key_display=">")),
    (REPLAY, Binding("g", "go_to", "Go to a time")),
]
# What replay hides: everything that writes, drives the demo, or polls a server.
NOT_IN_REPLAY = WRITE_ACTIONS | DEMO_ACTIONS | {"advise", "pause", "interval", "refresh"}

BINDINGS: list[Binding] = [b for _, b in _SECTIONED]
# The keys of the write actions: with --read-only they are unbound, answered with one line, and the
# health line offers none of them as a fix.
WRITE_KEYS = frozenset(key for b in BINDINGS if b.action in WRITE_ACTIONS for key in b.key.split(","))
READ_ONLY_REFUSAL = "read-only: writes are disabled"
REPLAY_BINDINGS: list[Binding] = [b for _, b in _REPLAY]
SECTION: dict[str, str] = {b.action: section for section, b in (*_SECTIONED, *_REPLAY)}


def section(binding: Binding) -> str | None:
    """The help section of one of our bindings; None for Textual's own (cursor keys, palette)."""
    return SECTION.get(binding.action)


# Keys that live on the tables themselves (DataTable): listed in help as well.
TABLE_KEYS: list[tuple[str, str]] = [
    ("enter", "Jobs: the job's detail. Sessions: the full session. Queues: only that queue (again: all)"),
    ("↑ ↓ pgup pgdn home end", "Move the cursor"),
]
