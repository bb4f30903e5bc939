-- Does the jobs table exist, can we read it, does it have the columns we need? Run once per connection.
-- Names arrive as parameters and are quoted server-side by format().
SELECT j.oid::bigint AS jobs_oid,
       j.oid IS NOT NULL AND has_table_privilege(j.oid, 'SELECT') AS can_select,
       ARRAY(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = j.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
       s.oid::bigint AS stats_oid,
       s.oid IS NOT NULL AND has_table_privilege(s.oid, 'SELECT') AS can_select_stats,
       current_user::text AS role
FROM (SELECT to_regclass(format('%%I.%%I', %(schema)s::text, %(table)s::text)) AS oid) j,
     (SELECT to_regclass(format('%%I.%%I', %(schema)s::text, %(table)s::text || '_stats')) AS oid) s
