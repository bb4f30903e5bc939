-- pg-boss's stuck rule on the job row j: active, and past its timeout (started_on + expire_in, an
-- interval, before schema 25; + expire_seconds after) or, from 30, its heartbeat (preview_stuck.sql,
-- requeue.sql's choice and its re-check on the locked row).
j.state = 'active'
      AND j.started_on + j.expire_in < now()  -- [<25]
      AND (j.started_on + j.expire_seconds * interval '1 second' < now()  -- [25+]
           OR coalesce(j.heartbeat_on + j.heartbeat_seconds * interval '1 second' < now(), false)  -- [30+]
           )  -- [25+]
