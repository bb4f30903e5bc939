-- Whether another session holds an advisory lock that could be the job lock of a job whose process is
-- not alive: a held single-key lock ({held}) that is neither a process's lock ("<processes table>-<id>",
-- any row) nor the job lock of an unfinished job on an alive process ({alive}). When there is none
-- (the usual case: a live worker holds its process's lock and its own jobs'), no job of a process
-- that is not alive holds its lock, so none need be judged one by one: the running count reads the
-- alive processes' jobs only, O(jobs being run), however many stuck jobs the table holds.
-- Uncorrelated: read once per statement, a one-time filter.
EXISTS (SELECT 1 FROM unnest({held}::bigint[]) k(key)
        WHERE k.key NOT IN (SELECT ('x' || substr(md5({processes_name} || '-' || p.id::text), 1, 16))::bit(64)::bigint
                            FROM {gp} p)
          AND k.key NOT IN (SELECT ('x' || substr(md5({jobs_name} || '-' || j.id::text), 1, 16))::bit(64)::bigint
                            FROM {gj} j
                            WHERE j.locked_by_id = ANY ({alive}::uuid[]) AND j.finished_at IS NULL))
