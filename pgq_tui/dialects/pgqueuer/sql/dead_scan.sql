-- Held failures, newest first, at most %(rows)s, when no index serves them: one scan with a top-N sort
-- (dead.sql reads them through the advised index instead).
{dead_row}
FROM (SELECT j.id, j.entrypoint AS queue, j.attempts, j.updated AS finished_at,
             CASE WHEN octet_length(j.payload) <= 65536 THEN left(convert_from(j.payload, 'UTF8'), 200) END
                 AS payload_preview
      FROM {jobs} j WHERE j.status = 'failed'
      ORDER BY j.id DESC LIMIT %(rows)s) d
ORDER BY d.finished_at DESC, d.id DESC
