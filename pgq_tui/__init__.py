"""pgq-top: a PostgreSQL SKIP LOCKED job queue and a terminal dashboard that shows and fixes it."""

import logging

__version__ = "0.2.0"

# A library logs; the application decides where it goes (`pgq-top worker` prints the pool's
# supervision lines on stderr). Without this, Python's last-resort handler would write warnings
# straight onto the terminal the dashboard draws on.
logging.getLogger(__name__).addHandler(logging.NullHandler())
