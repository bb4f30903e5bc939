-- A running job's holder: alive when another session holds the job's advisory lock or its
-- locked_by_id process is alive (GoodJob::Process.active), gone when the stuck rule holds, else
-- unknown (a released job: no locked_by_id, no lock).
CASE WHEN {job_locked} THEN 'alive'
     WHEN j.locked_by_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM {gp} p WHERE p.id = j.locked_by_id AND {process_active}) THEN 'alive'
     WHEN ({stuck}) THEN 'gone'
     ELSE 'unknown' END
