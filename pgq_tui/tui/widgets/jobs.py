"""Job tables: leases (running), stuck jobs (past the stuck rule) and dead letters (dead jobs)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pgq_tui.monitor.figures import sum_known
from pgq_tui.monitor.provenance import list_note
from pgq_tui.monitor.snapshot import Lease, LeaseList, Snapshot
from pgq_tui.tui.format import DASH, fmt_age, fmt_age_coarse, fmt_ago, safe
from pgq_tui.tui.widgets.table import Column, PanelTable, Row, matches


def _holder(lease: Lease) -> Text:
    # A connected holder of an expired lease may still be running the job: requeueing risks a duplicate.
    if lease.holder_connected:
        pid = f" {lease.holder_pid}" if lease.holder_pid else ""
        return Text(f"alive{pid}", style="bold yellow")
    if lease.liveness == "unknown":  # the queue records nothing that ties a worker to a session
        return Text("unknown", style="dim")
    return Text("gone", style="dim")


def _heartbeat(lease: Lease) -> Text:
    """How long ago the holder last renewed the lease (workers renew every lease/3); a dash: not yet,
    so claimed less than lease/3 ago, or held by a worker without heartbeats."""
    if lease.heartbeat_age is None:
        return Text(DASH, style="dim", justify="right")
    return Text(fmt_age(max(0.0, lease.heartbeat_age)), style="dim", justify="right")


def _tries(attempts: int, max_attempts: int) -> str:
    """ "2/5"; just "2" when the queue records no limit (max_attempts 0)."""
    return f"{attempts}/{max_attempts}" if max_attempts else str(attempts)


class _LeaseTable(PanelTable):
    PANEL = "leases"
    MARKABLE = True

    def _list(self, snap: Snapshot) -> LeaseList:
        raise NotImplementedError

    def total(self, snap: Snapshot) -> int | None:
        return self._list(snap).total

    def total_unknown(self, snap: Snapshot) -> bool:
        return self._list(snap).total is None

    def subtitle_notes(self) -> list[str]:
        snap = self._snapshot
        note = list_note(self._list(snap).figure, snap.server.now) if snap is not None else None
        return [note] if note else []

    def _left(self, lease: Lease) -> Text:
        raise NotImplementedError

    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        out = []
        for lease in self._list(snap).rows:
            if not matches(
                filter_text, lease.queue, lease.id, lease.locked_by, lease.payload_preview, queue=lease.queue
            ):
                continue
            cells: list[object] = [
                Text(str(lease.id), justify="right"),
                safe(lease.queue, limit=9),
                Text(_tries(lease.attempts, lease.max_attempts), justify="right"),
                self._left(lease),
                _holder(lease),
                _heartbeat(lease),
            ]
            if self.wide:
                cells.append(safe(lease.locked_by, style="dim", limit=26))
            out.append(Row(key=str(lease.id), cells=tuple(cells), target=lease.id, job_id=lease.id))
        return out


def _lease_columns(time_label: str) -> tuple[Column, ...]:
    return (
        Column("id", 8, right=True),
        Column("queue", 9),
        Column("try", 5, right=True),
        Column(time_label, 7, right=True),
        Column("holder", 11),
        Column("beat", 5, right=True),  # since the last heartbeat
        Column("locked_by", 26, wide_only=True),
    )


class StuckTable(_LeaseTable):
    TITLE = "2 Stuck jobs"
    COLUMNS = _lease_columns("stuck")

    def _list(self, snap: Snapshot) -> LeaseList:
        return snap.stuck

    def _left(self, lease: Lease) -> Text:
        return Text(fmt_age_coarse(-lease.seconds_left), style="red", justify="right")


class LeasesTable(_LeaseTable):
    TITLE = "3 Leases"
    COLUMNS = _lease_columns("left")

    def _list(self, snap: Snapshot) -> LeaseList:
        return snap.leases

    def _left(self, lease: Lease) -> Text:
        style = "red" if lease.seconds_left < 0 else ""
        return Text(fmt_age_coarse(lease.seconds_left), style=style, justify="right")


class DeadTable(PanelTable):
    """Failed jobs (dead letters) from `Snapshot.dead`: `t` retries them, `D` discards them."""

    TITLE = "4 Dead jobs"
    PANEL = "dead"
    MARKABLE = True
    COLUMNS = (
        Column("id", 8, right=True),
        Column("queue", 14),
        Column("try", 5, right=True),
        Column("failed", 7, right=True),
        Column("last error", None),
    )

    def total(self, snap: Snapshot) -> int | None:
        # A monitor that does not list dead jobs still counts them per queue: show "0 of N".
        # (None when the dead count was not taken: the rows shown, never "of 0")
        if snap.dead.total is None:
            return None
        return snap.dead.total or sum_known(snap.queues, "dead")

    def total_unknown(self, snap: Snapshot) -> bool:
        return snap.dead.total is None  # the list has not landed and a dead count is unknown

    def subtitle_notes(self) -> list[str]:
        snap = self._snapshot
        note = list_note(snap.dead.figure, snap.server.now) if snap is not None else None
        return [note] if note else []

    def build_rows(self, snap: Snapshot, filter_text: str) -> Sequence[Row]:
        out = []
        for job in snap.dead.rows:  # newest first
            if not matches(
                filter_text, job.queue, job.id, job.last_error, job.payload_preview, queue=job.queue
            ):
                continue
            cells = (
                Text(str(job.id), justify="right"),
                safe(job.queue, limit=14),
                Text(f"{job.attempts}/{job.max_attempts}", justify="right"),
                Text(fmt_ago(job.finished_at, snap.server.now).replace(" ago", ""), justify="right"),
                safe(job.last_error, style="yellow", limit=self.flex_width()),
            )
            out.append(Row(key=str(job.id), cells=cells, target=job.id, job_id=job.id))
        return out
