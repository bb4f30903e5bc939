"""Findings linked into chains (symptom first, root cause last), ordered by causality then severity,
and the chain as one line that fits a width: the root and its fix always survive the abbreviation.

    claims 463x slower ← 8.7k dead tuples vacuum can't remove ← xmin held 1m20s by pid 13028 (...) · K
"""

from __future__ import annotations

from collections.abc import Sequence

from pgq_tui.diagnosis.findings import DEFAULTS, LEVEL_RANK, Chain, Finding, Thresholds
from pgq_tui.diagnosis.rules import findings as run_rules
from pgq_tui.exitcodes import WHY_CRITICAL, WHY_OK, WHY_WARNING
from pgq_tui.monitor.snapshot import Snapshot


def _resolve(f: Finding, by_id: dict[str, Finding]) -> Finding | None:
    """The first of `f.causes` that was found: an exact id, or the strongest finding under a prefix
    ending in ":" ("lock:" -> any lock)."""
    for want in f.causes:
        if want.endswith(":"):
            matches = [g for k, g in by_id.items() if k.startswith(want) and k != f.id]
            if matches:
                return max(matches, key=lambda g: (LEVEL_RANK[g.level], g.held_s))
        elif want in by_id and want != f.id:
            return by_id[want]
    return None


def link(found: Sequence[Finding]) -> list[Chain]:
    """Chains from findings: each finding rests on at most one cause; a chain runs from a finding
    nothing else rests on (the symptom) down to a finding that rests on nothing (the root). A finding
    that needs a cause and has none is dropped. Worst first; then longer (more explained) first."""
    by_id = {f.id: f for f in found}
    cause: dict[str, Finding] = {}
    changed = True
    while changed:  # dropping a finding can leave another without its cause
        changed = False
        for f in list(by_id.values()):
            c = _resolve(f, by_id)
            if c is None and f.needs_cause:
                del by_id[f.id]
                cause.pop(f.id, None)
                changed = True
            elif c is not None:
                cause[f.id] = c
    explaining = {c.id for c in cause.values()}
    chains = []
    for f in by_id.values():
        if f.id in explaining:
            continue
        links = [f]
        while links[-1].id in cause and cause[links[-1].id] not in links:
            links.append(cause[links[-1].id])
        chains.append(Chain(tuple(links)))
    chains.sort(key=lambda c: (-LEVEL_RANK[c.level], -len(c.links), -c.root.held_s, c.root.id))
    return chains


def diagnose(history: Sequence[Snapshot], t: Thresholds = DEFAULTS) -> list[Chain]:
    """The whole diagnosis of one queue's Snapshot history (oldest first): a pure function, so a
    recorded history replays to the same chains."""
    return link(run_rules(history, t))


WHY_EXIT = {"ok": WHY_OK, "warn": WHY_WARNING, "crit": WHY_CRITICAL}


def worst_level(chains: Sequence[Chain]) -> str:
    """The worst chain's level: "ok" when there is none."""
    return max((c.level for c in chains), key=LEVEL_RANK.__getitem__, default="ok")


def exit_code(chains: Sequence[Chain]) -> int:
    """`why`'s exit code (pgq_tui/exitcodes.py): 0 nothing wrong, 20 the worst chain warns, 21 it
    is critical."""
    return WHY_EXIT[worst_level(chains)]
