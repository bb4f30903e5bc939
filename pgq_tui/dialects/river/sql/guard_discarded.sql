-- The guard of River's JobRetry as pgq-top offers it: discarded jobs. None is running.
j.state = 'discarded'
