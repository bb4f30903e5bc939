"""A home-grown table described by a mapping file, as a dialect: detection by column shape."""

from __future__ import annotations

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    Capability,
    IndexAdvice,
    Match,
    Pass,
    QueueModel,
    State,
    Statement,
    StateWord,
)
from pgq_tui.dialects.kit import found
from pgq_tui.dialects.mapping.build import Builder
from pgq_tui.dialects.mapping.spec import MappingSpec

# state -> the mapping's status group it is read from, and the capability that lists it
_GROUPS = {
    State.READY.value: ("ready", Capability.COUNTS),
    State.SCHEDULED.value: ("ready", Capability.COUNTS),
    State.RUNNING.value: ("running", Capability.LEASES),
    State.STUCK.value: ("running", Capability.LEASES),
    State.DEAD.value: ("dead", Capability.DEAD),
    State.DONE.value: ("done", Capability.DONE),
}


class MappingDialect:
    """One mapping file. Matches every table (or the named one) having all the mapped columns."""

    version_markers: tuple[VersionMarker, ...] = ()

    def __init__(self, spec: MappingSpec) -> None:
        self.spec = spec
        self.kind = spec.kind
        self.title = spec.title
        self.versions = f"any table of this shape (mapping {spec.source})"

    def detect(self, catalog: Catalog) -> list[Match]:
        spec = self.spec
        out = []
        for rel in catalog.with_columns(spec.shape):
            if rel.kind not in ("r", "p"):
                continue
            if (spec.table and rel.name != spec.table) or (spec.schema and rel.schema != spec.schema):
                continue
            evidence = f"columns {', '.join(sorted(spec.shape))} (mapping {spec.source})"
            # a named table is the user's explicit choice: it outranks any shape match
            score = len(spec.columns) + (100 if spec.table else 0)
            out.append(found(spec.kind, rel, None, evidence, score, config=spec.source))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        spec = self.spec
        rel = catalog.relation(match.schema, match.table)
        if rel is None:
            raise LookupError(f"{match.schema}.{match.table} is not in the catalog")
        b = Builder(spec, rel)
        counts: list[Statement] = []
        advice: dict[str, IndexAdvice] = {}
        unsupported: list[tuple[Capability, str]] = []
        overall: list[str] = []  # states counted over all queues together (no per-queue index)
        scanned: list[tuple[str, tuple[str, ...]]] = []  # groups no index serves: one scan for all
        per_queue: dict[str, tuple[str, ...]] = {}  # group -> its states counted queue by queue
        for state, (group, capability) in _GROUPS.items():
            if group not in spec.states:
                continue
            if not b.parts(state):  # e.g. stuck without a rule, scheduled without a run time
                continue
            if b.queue_indexed(group):
                per_queue[group] = (*per_queue.get(group, ()), state)
            elif b.indexed(group):
                counts.append(b.count(state))
                overall.append(state)
            elif group not in advice:
                # no index: the whole group by a scan (the engine picks poll or background)
                states = tuple(s for s, (g, _) in _GROUPS.items() if g == group)
                scanned.append((group, tuple(s for s in states if b.parts(s))))
                advice[group] = b.advice(group, capability, states)
        # a group's per-queue counts (and the ready group's oldest) share one skip-scan of the queues
        oldest_here = "ready" in per_queue and b.has("queue") and b.oldest_ready_indexed()
        for group, states in per_queue.items():
            counts.append(b.count_per_queue(group, states, oldest=oldest_here and group == "ready"))
        # One pass counts every such group an incident turns on (a second scan would read the table
        # again); done has its own: its walk of every finished row is most of a kept table's cost, and
        # the background counter paces it apart so the stuck count never waits for it (#35).
        running_scan: Statement | None = None  # the running group alone by a scan: its pass, below
        for chosen in ([g for g in scanned if g[0] != "done"], [g for g in scanned if g[0] == "done"]):
            if chosen:
                ready_scanned = any(g == "ready" for g, _ in chosen) and bool(spec.col("run_at"))
                counts.append(b.count_scan(tuple(chosen), ready_scanned))
                if [g for g, _ in chosen] == ["running"]:
                    running_scan = counts[-1]
        for i, label in enumerate(spec.extra):
            extra = b.count_extra(i, label)
            counts.append(extra if b.indexed(label) else extra.scan())
            if b.indexed(label):
                overall.append(label)
        oldest = b.oldest_ready() if b.indexed("ready") and not oldest_here else None
        if oldest is not None:
            counts.append(oldest)
        elif spec.col("run_at") and "ready" not in advice and not oldest_here:
            counts.append(b.oldest_scan())
            wanted = b.advice("ready", Capability.OLDEST_READY, ())
            advice["oldest"] = IndexAdvice(
                wanted.capability,
                wanted.definition,
                "the oldest waiting job per queue is read by a scan without run_at in index order",
            )
        if spec.rule is None:
            unsupported.append((Capability.LEASES, spec.stuck_rule))
        leases_ok = "running" in spec.states
        dead_ok = "dead" in spec.states
        words = [
            StateWord(State.READY.value, f"{spec.columns['status']} in {list(spec.states['ready'])}, due"),
            StateWord(
                State.SCHEDULED.value, f"{spec.columns['status']} in {list(spec.states['ready'])}, later"
            ),
            StateWord(State.RUNNING.value, f"{spec.columns['status']} in {list(spec.states['running'])}"),
            StateWord(State.STUCK.value, spec.stuck_rule),
        ]
        words += [
            StateWord(k, f"{spec.columns['status']} in {list(spec.states[k])}")
            for k in ("dead", "done")
            if k in spec.states
        ]
        words += [
            StateWord(label, f"{spec.columns['status']} in {list(v)}") for label, v in spec.extra.items()
        ]
        leases = (
            _served(b.leases(b.queue_indexed("running"), "running" in advice), "running" not in advice)
            if leases_ok
            else None
        )
        # on a big table the background counter reads the running count and the lease list in one scan
        passes: tuple[Pass, ...] = ()
        if running_scan is not None and leases is not None and not leases.indexed:
            passes = (b.running_pass(running_scan, leases),)
        return QueueModel(
            match=match,
            activity=b.activity(),
            title=spec.title,
            stuck_rule=spec.stuck_rule,
            states=tuple(words),
            counts=tuple(counts),
            leases=leases,
            dead=_served(b.dead(), "dead" not in advice) if dead_ok else None,
            job=b.job(),
            claim_probe=b.claim_probe(),
            actions=b.actions(leases_ok, dead_ok),
            extra_states=tuple(spec.extra),
            passes=passes,
            capped_overall=tuple(overall),
            liveness_known=False,
            advice=tuple(advice.values()),
            unsupported=tuple(unsupported),
            relations=((rel.schema, rel.name),),
            search=b.search(),
        )


def _served(statement: Statement, indexed: bool) -> Statement:
    """The statement as it is, or marked a scan when no index serves its rows."""
    return statement if indexed else statement.scan()
