"""Periodic schedules: the expression in words, its last run, the next due run, whether it is late,
and the jobs it made (docs/schedules.md).

Pure: rows in (the canonical shapes a dialect's schedule statements return, `dialects.contract`),
frozen values out; no database, no clock (the caller passes the server's `now`). Cron expressions are
read by croniter, their words by cron-descriptor (`cron.py` says why those two).
"""
