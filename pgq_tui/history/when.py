"""TIME arguments (`--at`, replay's go-to): ISO 8601, in the recording's clock when no offset is given."""

from __future__ import annotations

import re
from datetime import datetime, time, tzinfo

from pgq_tui.history.store import RecordingError

_TIME_OF_DAY = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?$")


def parse_time(text: str, zone: tzinfo, day: datetime | None = None) -> datetime:
    """A point in time from ISO 8601 (`2026-12-01T03:12:00Z`, `2026-12-01 03:12`, with or without an
    offset), or a time of day (`03:12`) on `day`'s date. Without an offset the time is read in `zone`,
    the recorded server's clock (what the replay header shows).

    >>> from datetime import timedelta, timezone
    >>> parse_time("2026-12-01T03:12:00Z", timezone.utc).isoformat()
    '2026-12-01T03:12:00+00:00'
    >>> parse_time("2026-12-01 03:12", timezone(timedelta(hours=1))).isoformat()
    '2026-12-01T03:12:00+01:00'
    >>> parse_time("03:12", timezone.utc, datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)).isoformat()
    '2026-12-01T03:12:00+00:00'
    >>> parse_time("yesterday", timezone.utc)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pgq_tui.history.store.RecordingError: not a time: 'yesterday' (use ISO 8601, ...)
    """
    raw = text.strip()
    try:
        if _TIME_OF_DAY.match(raw):
            if day is None:
                raise ValueError("a time of day needs a date")
            at = datetime.combine(day.astimezone(zone).date(), time.fromisoformat(raw.zfill(5)))
        else:
            # Python 3.10's fromisoformat takes neither "Z" nor a space before the offset
            at = datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", raw))
    except ValueError:
        raise RecordingError(
            f"not a time: {text!r} (use ISO 8601, e.g. 2026-12-01T03:12:00Z, or 03:12)"
        ) from None
    return at if at.tzinfo is not None else at.replace(tzinfo=zone)
