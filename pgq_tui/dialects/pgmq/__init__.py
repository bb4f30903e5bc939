"""pgmq (Tembo's Postgres message queue; Supabase Queues): one table per queue, read by visibility timeout."""

from pgq_tui.dialects.pgmq.dialect import PgmqDialect

DIALECTS = (PgmqDialect(),)

__all__ = ["DIALECTS", "PgmqDialect"]
