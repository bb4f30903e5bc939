"""What the diagnosis says, as frozen data: findings (one link each), the chains they form, the fix
at a chain's root, and the thresholds that decide when a finding is signal rather than noise.

Pure data: `rules` makes Findings from a Snapshot history, `chains` links them. Every text here is
plain (untrusted parts such as application names and queries included): front ends render it as
rich `Text` or escape it, never as markup.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, fields
from typing import Any

OK, WARN, CRIT = "ok", "warn", "crit"
LEVEL_RANK = {OK: 0, WARN: 1, CRIT: 2}


@dataclass(frozen=True)
class Fix:
    """How to remove a cause: the dashboard key (None: no key does it), the SQL to run by hand, or a
    shell command; `what` says it in words ("terminate pid 13028")."""

    what: str
    key: str | None = None
    sql: str | None = None
    command: str | None = None
    line: str | None = None  # a few words for the health line when no key does it

    @property
    def short(self) -> str:
        """What the health line ends with: the key, else a few words, else the command or SQL."""
        return self.key or self.line or self.command or self.sql or self.what


@dataclass(frozen=True)
class Finding:
    """One link of a chain: a symptom or a cause, with the evidence it rests on.

    `id` is stable while the same thing is wrong ("xmin:backend:13028", "dead_tuples"); `causes`
    lists the ids (or id prefixes ending in ":") of what may explain it, in order of preference:
    `chains.link` keeps the first one that was found. `held_s`: how long its evidence has held."""

    id: str
    rule: str
    level: str
    short: str  # a few words for the health line ("claims 463x slower")
    text: str  # the full sentence for the why screen and `pgq-top why`
    evidence: tuple[str, ...] = ()
    fix: Fix | None = None
    causes: tuple[str, ...] = ()
    held_s: float = 0.0
    note: str = ""  # who, for a root on the health line: "(idle in tx, app 'report', 10.0.0.5)"
    pid: int | None = None  # the session to terminate, when there is one
    needs_cause: bool = False  # without one of its causes it says nothing (dropped)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evidence"] = list(self.evidence)
        out["causes"] = list(self.causes)
        return out


@dataclass(frozen=True)
class Chain:
    """Findings from the symptom (first) to the root cause (last); the fix is the root's."""

    links: tuple[Finding, ...]

    @property
    def root(self) -> Finding:
        return self.links[-1]

    @property
    def symptom(self) -> Finding:
        return self.links[0]

    @property
    def level(self) -> str:
        return max((f.level for f in self.links), key=LEVEL_RANK.__getitem__, default=OK)

    @property
    def fix(self) -> Fix | None:
        return self.root.fix

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "line": one_line(self),
            "root": self.root.id,
            "fix": asdict(self.fix) if self.fix else None,
            "links": [f.to_dict() for f in self.links],
        }


@dataclass(frozen=True)
class Thresholds:
    """When evidence becomes a finding. A finding appears only once its evidence has held for
    `min_duration_s` (one slow poll raises nothing); evidence the server dates itself (a
    transaction's start, a lock wait's start, a lease's expiry) counts from that date."""

    min_duration_s: float = 10.0  # evidence must hold this long (seconds)
    xmin_hold_s: float = 60.0  # an xmin horizon held this long is a cause
    stalled_after_s: float = 30.0  # a queue whose oldest ready job waits this long with no claims: stalled
    lock_wait_s: float = 5.0  # a session waiting on a lock this long: blocked
    backlog_growth_per_s: float = 1.0  # the ready backlog growing faster than this (jobs/s): growing
    backlog_window_s: float = 300.0  # rates and growth are averaged over this much history
    schedule_late_s: float = 300.0  # a schedule this long past its due occurrence is late

    @classmethod
    def from_mapping(cls, data: dict[str, Any], source: str = "") -> Thresholds:
        """From a targets file's `[diagnosis]` table; a wrong key or value raises ValueError."""
        known = {f.name for f in fields(cls)}
        values: dict[str, float] = {}
        for key, value in data.items():
            if key not in known:
                raise ValueError(f"{source}unknown key {key!r} (known: {', '.join(sorted(known))})")
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{source}{key} must be a number >= 0")
            values[key] = float(value)
        return cls(**values)


DEFAULTS = Thresholds()


ARROW = " ← "
FIX_SEP = " · "
ELLIPSIS = "…"


def _root_text(root: Finding, note: bool = True) -> str:
    return f"{root.short} {root.note}" if note and root.note else root.short


def _fix_short(fix: Fix, hide_keys: Collection[str]) -> str:
    if fix.key is not None and fix.key in hide_keys:
        return fix.line or fix.what
    return fix.short


def _cut(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def one_line(chain: Chain, width: int | None = None, hide_keys: Collection[str] = ()) -> str:
    """The chain on one line, abbreviated to `width` characters: first the middle links become "…",
    then the root's note is cut, then the symptom; the root's words and the fix key stay. A key in
    `hide_keys` (a write key with --read-only) is not offered: the fix's words stand instead.

    >>> root = Finding("r", "x", "crit", "xmin held 1m20s by pid 13028", "", fix=Fix("t", key="K"),
    ...                note="(idle in tx, app 'report', 10.0.0.5)")
    >>> mid = Finding("d", "x", "crit", "8.7k dead tuples vacuum can't remove", "")
    >>> top = Finding("c", "x", "warn", "claims 463x slower", "")
    >>> one_line(Chain((top, mid, root)), 72)
    'claims 463x slower ← … ← xmin held 1m20s by pid 13028 (idle in tx, … · K'
    >>> one_line(Chain((top, mid, root)), 50)
    'claims 463… ← … ← xmin held 1m20s by pid 13028 · K'
    """
    fix = f"{FIX_SEP}{_fix_short(chain.fix, hide_keys)}" if chain.fix else ""
    symptoms = [f.short for f in chain.links[:-1]]
    root = chain.root
    full = ARROW.join([*symptoms, _root_text(root)]) + fix
    if width is None or len(full) <= width:
        return full
    head = [symptoms[0], ELLIPSIS] if len(symptoms) > 1 else symptoms
    line = ARROW.join([*head, _root_text(root)]) + fix
    if len(line) <= width:
        return line
    bare = ARROW.join([*head, root.short]) + fix
    room = width - len(bare) - 1  # what is left for the note, after a space
    if root.note and room >= 8:
        return ARROW.join([*head, f"{root.short} {_cut(root.note, room)}"]) + fix
    if len(bare) <= width:
        return bare
    if head:
        tail = ARROW.join(["", *head[1:], root.short]) + fix
        room = width - len(tail)
        if room >= 8:
            return _cut(head[0], room) + tail
    room = width - len(root.short) - len(fix) - 1
    if root.note and room >= 8:
        return f"{root.short} {_cut(root.note, room)}{fix}"
    return _cut(root.short, width - len(fix)) + fix
