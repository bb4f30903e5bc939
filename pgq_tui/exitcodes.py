"""Every exit code pgq-top returns, in one place (docs/exit-codes.md is this module in a table, and
tests/test_reference_docs.py holds the two together).

Three schemes:

- pgq-top's own, for every command (the dashboard, snapshot, jobs, the actions, init, worker, record,
  replay, advise, the exporter, the fleet): 0 success, then one code per class of failure.
- `check`'s, the monitoring-plugins convention a Nagios or Icinga runner reads: 0 OK, 1 WARNING,
  2 CRITICAL, 3 UNKNOWN. Every failure of `check` (bad flags included) is UNKNOWN, so a typo never
  reads as CRITICAL.
- `why`'s: 0 nothing wrong, WHY_WARNING or WHY_CRITICAL for what it found, else the failure's own code
  from pgq-top's scheme. Its findings use codes of their own (20, 21) so that neither collides with a
  failure: until 0.1 they were 1 and 2, the codes of an unexpected error and of bad usage.
"""

from __future__ import annotations

# pgq-top's own scheme
EXIT_OK = 0
EXIT_ERROR = 1  # anything else that went wrong (a bug, a failed action, workers crashing in a loop)
EXIT_USAGE = 2  # bad flags or arguments, DSN syntax, an unreadable file given as input (argparse uses 2)
EXIT_CONNECT = 3  # cannot connect or authenticate, the connection was lost, or no answer in time
EXIT_SCHEMA = 4  # a table, column or other object is missing or has the wrong shape; no queue found
EXIT_PRIVILEGE = 5  # the role lacks a privilege
EXIT_TERMINAL = 6  # the terminal cannot show the dashboard
EXIT_REFUSED = 7  # an action was refused (nothing eligible, not confirmed, read-only, no terminal, init)
EXIT_STATEMENT_TIMEOUT = 8  # a statement ran past statement_timeout (or was cancelled)
EXIT_LOCK_TIMEOUT = 9  # a lock was not granted within lock_timeout
EXIT_CONFLICT = 10  # deadlock or serialization failure: rolled back, safe to retry
EXIT_RESOURCES = 11  # the server is out of disk, memory or another resource
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); a demo stopped by SIGTERM/SIGHUP exits 128 + the signal

# `check`: monitoring-plugins
CHECK_OK = 0
CHECK_WARNING = 1
CHECK_CRITICAL = 2
CHECK_UNKNOWN = 3

# `why`: what it found (a failure keeps its own code above)
WHY_OK = 0
WHY_WARNING = 20  # the worst chain warns
WHY_CRITICAL = 21  # the worst chain is critical

# Each scheme's codes and their short names, as docs/exit-codes.md lists them (a test reads the page
# against these).
GENERAL = {
    EXIT_OK: "success",
    EXIT_ERROR: "an unexpected error",
    EXIT_USAGE: "bad usage",
    EXIT_CONNECT: "cannot connect",
    EXIT_SCHEMA: "no queue found",
    EXIT_PRIVILEGE: "a privilege missing",
    EXIT_TERMINAL: "the terminal cannot show the dashboard",
    EXIT_REFUSED: "an action refused",
    EXIT_STATEMENT_TIMEOUT: "statement timeout",
    EXIT_LOCK_TIMEOUT: "lock timeout",
    EXIT_CONFLICT: "deadlock or serialization failure",
    EXIT_RESOURCES: "the server is out of resources",
    EXIT_INTERRUPTED: "interrupted",
}
CHECK = {CHECK_OK: "OK", CHECK_WARNING: "WARNING", CHECK_CRITICAL: "CRITICAL", CHECK_UNKNOWN: "UNKNOWN"}
WHY = {
    WHY_OK: "nothing wrong",
    WHY_WARNING: "the worst chain warns",
    WHY_CRITICAL: "the worst chain is critical",
}
assert not (set(WHY) - {WHY_OK}) & set(GENERAL), "why's findings must not collide with a failure's code"
