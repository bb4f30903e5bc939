"""good_job (Rails, the `good_job` gem), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.good_job.dialect import GoodJobDialect

DIALECTS = (GoodJobDialect(),)
