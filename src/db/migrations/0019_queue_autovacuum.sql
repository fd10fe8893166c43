-- The work queue holds only the backlog, but every order leaves dead entries in it (its claim moves it, its
-- completion deletes it), which each claim walks until a vacuum removes them. A worker vacuums it after every
-- 2,000 claims where its role owns the table; the service's least-privilege role does not, so autovacuum takes
-- the table after every 1,000 dead or inserted rows whatever its size, at full speed, instead of the default
-- 20% of the table (which never comes for a small hot table). Where autovacuum is off nothing changes.
ALTER TABLE "transaction_queue" SET (
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_analyze_threshold = 1000,
  autovacuum_analyze_scale_factor = 0,
  autovacuum_vacuum_cost_delay = 0
);
