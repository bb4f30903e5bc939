-- A workflow's payload preview: its function name and the first characters of its serialized inputs
-- (dbos.workflow_input, where DBOS 3.4 keeps them; the status row's own inputs column otherwise),
-- NULL when the inputs are large.
(SELECT CASE WHEN pg_column_size(x.inputs) <= 65536 THEN left(coalesce(j.name, '?') || ' ' || coalesce(x.inputs, ''), 200) END
 FROM (SELECT coalesce((SELECT i.inputs FROM {wi} i WHERE i.workflow_uuid = j.workflow_uuid), j.inputs) AS inputs) x)
