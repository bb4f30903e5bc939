-- When pg-boss's cron pass last ran (version.cron_on, stamped by every instance started with
-- schedule: true at each pass): NULL when none ever ran.
SELECT max(v.cron_on) AS pass_at FROM {version} v
