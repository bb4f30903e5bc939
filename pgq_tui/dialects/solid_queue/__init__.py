"""Solid Queue (Rails; its schema from Solid Queue's own queue_schema.rb), as a dialect. SQL in `sql/`."""

from pgq_tui.dialects.solid_queue.dialect import SolidQueueDialect

DIALECTS = (SolidQueueDialect(),)
