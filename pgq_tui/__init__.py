"""pgq-top: a PostgreSQL SKIP LOCKED job queue and a terminal dashboard that shows and fixes it."""

__version__ = "0.1.0"
