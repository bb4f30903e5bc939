-- A running job's holder: alive when its locked_by_id process is alive (GoodJob::Process.active) or
-- another session holds the job's advisory lock, gone when the stuck rule holds, else unknown (a
-- released job: no locked_by_id, no lock).
CASE WHEN j.locked_by_id = ANY ({alive}::uuid[]) THEN 'alive'
     WHEN {job_locked} THEN 'alive'
     WHEN ({stuck}) THEN 'gone'
     ELSE 'unknown' END
