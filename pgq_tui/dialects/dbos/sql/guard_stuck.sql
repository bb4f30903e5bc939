-- The guard of a resume of stuck workflows: stuck by pgq-top's rule (stuck.sql): PENDING, its
-- executor not connected. None of them has a live executor by that rule.
{stuck}
