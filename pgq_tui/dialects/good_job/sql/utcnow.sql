-- good_job's times are Rails datetimes: timestamp without time zone, in UTC (ActiveRecord's default).
(now() AT TIME ZONE 'UTC')
