-- The guard of Oban's retry_job and delete_job as pgq-top offers them: discarded jobs (failed for
-- good). None is executing.
j.state = 'discarded'
