"""ISO timestamps as PostgreSQL's JSON prints them, read on every supported Python. Pure.

`to_jsonb(timestamptz)` drops trailing zeros of the fraction (`...:05.1234+00:00`) and may print an
hour-only or seconds offset; Python 3.10's `datetime.fromisoformat` takes only 3 or 6 fraction
digits and `+HH:MM` offsets (3.11 takes any ISO 8601). Special values (`infinity`) are not times.
"""

from __future__ import annotations

import re
from datetime import datetime

_ISO = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(?::\d{2})?)(?:\.(?P<frac>\d+))?"
    r"(?:(?P<z>Z)|(?P<sign>[+-])(?P<hh>\d{2})(?::?(?P<mm>\d{2}))?(?::?(?P<ss>\d{2}))?)?$"
)


def parse_timestamp(text: str) -> datetime:
    """An ISO timestamp; ValueError when it is not one (e.g. `infinity`).

    >>> parse_timestamp("2026-12-01T14:27:05.1234+00:00").microsecond
    123400
    >>> parse_timestamp("2026-12-01T14:27:05.1+05:30").isoformat()
    '2026-12-01T14:27:05.100000+05:30'
    >>> parse_timestamp("2026-12-01 14:27:05-08").isoformat()
    '2026-12-01T14:27:05-08:00'
    >>> parse_timestamp("1890-01-01T00:00:00-04:56:02").utcoffset().total_seconds()
    -17762.0
    >>> parse_timestamp("2026-12-01T14:27:05.123456789Z").isoformat()
    '2026-12-01T14:27:05.123456+00:00'
    >>> parse_timestamp("infinity")
    Traceback (most recent call last):
    ValueError: not an ISO timestamp: 'infinity'
    """
    m = _ISO.match(text.strip())
    if m is None:
        raise ValueError(f"not an ISO timestamp: {text!r}")
    iso = f"{m['date']}T{m['time']}"
    if m["frac"]:
        iso += "." + m["frac"][:6].ljust(6, "0")
    if m["z"]:
        iso += "+00:00"
    elif m["sign"]:
        iso += f"{m['sign']}{m['hh']}:{m['mm'] or '00'}" + (f":{m['ss']}" if m["ss"] else "")
    return datetime.fromisoformat(iso)
