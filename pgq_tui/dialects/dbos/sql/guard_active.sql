-- The guard of a cancel: workflows not yet finished (ENQUEUED, DELAYED, PENDING). DBOS's own cancel
-- admits every status but SUCCESS and ERROR; pgq-top leaves CANCELLED and dead-lettered ones alone
-- (a second cancel would change only their times).
j.status IN ('ENQUEUED', 'DELAYED', 'PENDING')
