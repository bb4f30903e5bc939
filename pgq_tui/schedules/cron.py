"""Cron expressions: parse, describe in words, and step to the occurrences around a moment, in the
time zone the framework stores (an IANA name; none is UTC).

The library: croniter 7 (MIT, pallets-eco; Python >= 3.9). Compared on 2026-12-02 with cronsim 2.8
and cron-converter 2.0.2 over Europe/Berlin's DST changes (docs/schedules.md, "The cron library"):
croniter and cronsim skip the hour that does not exist in spring (02:30 runs at 03:00 that day),
cron-converter returned 02:30+01:00, a time that does not exist; cronsim needs Python 3.11 while
pgq-top supports 3.10; croniter is the parser pgqueuer itself computes `next_run` with, so pgq-top
agrees with the framework it reads. Where they differ: on the autumn change croniter fires a fixed
02:30 twice (once per offset), cronsim once, as Vixie cron does; a schedule that ran at the first
02:30 is then "due" again an hour later here, never late by a day. The words: cron-descriptor 2.2
(MIT), "At 02:30 AM, Monday through Friday".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cron_descriptor import Options, get_description
from croniter import croniter

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True)
class Cron:
    """One parsed expression in its zone. `fields` is the five- or six-field form croniter reads
    (a seconds field last), whatever order the framework writes it in."""

    expression: str  # as the framework stores it
    fields: str
    zone: tzinfo
    zone_name: str

    def next_after(self, moment: datetime) -> datetime:
        """The first occurrence strictly after `moment` (aware), in the schedule's zone.

        >>> c = parse("30 2 * * *", "Europe/Berlin")
        >>> str(c.next_after(datetime(2026, 3, 28, 12, tzinfo=timezone.utc)))  # DST begins that night
        '2026-03-29 03:00:00+02:00'
        """
        it = croniter(self.fields, moment.astimezone(self.zone))
        out: datetime = it.get_next(datetime)
        return out

    def prev_before(self, moment: datetime) -> datetime:
        """The last occurrence strictly before `moment` (aware), in the schedule's zone."""
        it = croniter(self.fields, moment.astimezone(self.zone))
        out: datetime = it.get_prev(datetime)
        return out

    def period_s(self, occurrence: datetime) -> float:
        """Seconds from the occurrence before `occurrence` to it: "due every" around that moment (an
        irregular expression, `0 9 * * 1-5`, has a longer gap over the weekend).

        >>> c = parse("*/15 * * * *", None)
        >>> c.period_s(datetime(2026, 1, 1, 0, 30, tzinfo=timezone.utc))
        900.0
        """
        return elapsed(self.prev_before(occurrence), occurrence)


def elapsed(start: datetime, end: datetime) -> float:
    """Real seconds from `start` to `end`. Python subtracts two datetimes of the same tzinfo by
    their wall clocks (an autumn DST day would be 24h, not 25h): both are taken to UTC first.

    >>> from zoneinfo import ZoneInfo
    >>> berlin = ZoneInfo("Europe/Berlin")
    >>> elapsed(datetime(2026, 10, 24, 9, tzinfo=berlin), datetime(2026, 10, 25, 9, tzinfo=berlin))
    90000.0
    """
    return (end.astimezone(timezone.utc) - start.astimezone(timezone.utc)).total_seconds()


class CronError(ValueError):
    """An expression or time zone pgq-top cannot read, with why, in one line."""


def zone(name: str | None) -> tzinfo:
    """The IANA zone `name` (None or '': UTC, as pg-boss and Solid Queue store no zone as UTC)."""
    if not name:
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CronError(f"unknown time zone {name!r}") from None


def fields_of(expression: str, *, seconds_first: bool = False) -> str:
    """The croniter form of an expression: macros expanded, a six-field expression with its seconds
    first (cron-parser, fugit) turned into croniter's seconds-last order.

    >>> fields_of("@hourly"), fields_of("*/5 0 * * * *", seconds_first=True)
    ('0 * * * *', '0 * * * * */5')
    """
    text = " ".join(expression.split())
    text = MACROS.get(text.lower(), text)
    parts = text.split(" ")
    if len(parts) == 6 and seconds_first:
        parts = [*parts[1:], parts[0]]
    return " ".join(parts)


def parse(expression: str, zone_name: str | None, *, seconds_first: bool = False) -> Cron:
    """Parse `expression` in zone `zone_name`; CronError says why it cannot be read.

    >>> parse("0 9 * * * America/New_York", None).zone_name
    'America/New_York'
    >>> try:
    ...     parse("every hour", None)
    ... except CronError as exc:
    ...     print(exc)
    not a cron expression: 'every hour'
    >>> try:
    ...     parse("FREQ=DAILY;BYHOUR=2", None)
    ... except CronError as exc:
    ...     print(exc)
    an RFC 5545 recurrence rule, not a cron expression: 'FREQ=DAILY;BYHOUR=2'
    """
    words_ = expression.split()
    if len(words_) in (6, 7) and ("/" in words_[-1] or words_[-1] in ("UTC", "Z")):
        # Fugit's form, a zone after the fields ("0 9 * * * America/New_York"): the zone is the line's
        zone_name, expression = words_[-1], " ".join(words_[:-1])
    tz = zone(zone_name)
    fields = fields_of(expression, seconds_first=seconds_first)
    if "FREQ=" in expression.upper():
        raise CronError(f"an RFC 5545 recurrence rule, not a cron expression: {expression!r}")
    if len(fields.split(" ")) not in (5, 6) or not croniter.is_valid(fields):
        raise CronError(f"not a cron expression: {expression!r}")
    return Cron(expression, fields, tz, zone_name or "UTC")


def words(cron: Cron) -> str:
    """The expression in words, in English.

    >>> words(parse("30 2 * * 1-5", None))
    'At 02:30, Monday through Friday'
    """
    options = Options()
    options.use_24hour_time_format = True
    options.verbose = False
    parts = cron.fields.split(" ")
    # cron-descriptor reads six fields as seconds first; croniter's form has them last
    text = " ".join([parts[5], *parts[:5]]) if len(parts) == 6 else cron.fields
    out: str = get_description(text, options)
    return out


def span(seconds: float) -> str:
    """A period in the largest unit that divides it, for "due every 24h".

    >>> span(86400), span(90), span(3600), span(604800), span(1.5)
    ('24h', '90s', '1h', '7d', '1.5s')
    """
    for unit, size in (("d", 86400 * 7), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            n = seconds / (86400 if unit == "d" else size)
            return f"{n:g}{unit}" if unit != "h" or n < 48 else f"{n / 24:g}d"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"
