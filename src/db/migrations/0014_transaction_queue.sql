CREATE TABLE "transaction_queue" (
	"transaction_id" uuid PRIMARY KEY NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"due_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
DROP INDEX "transactions_pending_idx";--> statement-breakpoint
DROP INDEX "transactions_work_idx";--> statement-breakpoint
DROP INDEX "transactions_settlement_idx";--> statement-breakpoint
CREATE INDEX "transaction_queue_due_idx" ON "transaction_queue" USING btree ("due_at");--> statement-breakpoint
CREATE INDEX "transactions_open_idx" ON "transactions" USING btree ("created_at") WHERE "transactions"."completed_at" is null;--> statement-breakpoint
CREATE INDEX "transactions_settlement_idx" ON "transactions" USING btree ("provider","completed_at") WHERE "transactions"."completed_at" is not null;--> statement-breakpoint
-- Every order a worker will claim again: queued, processing (due when its lease runs out), pending with a re-query scheduled.
INSERT INTO "transaction_queue" ("transaction_id", "created_at", "due_at")
SELECT "id", "created_at",
       CASE WHEN "status" = 'queued' OR "lease_expires_at" IS NULL THEN "next_attempt_at"
            ELSE greatest("next_attempt_at", "lease_expires_at") END
FROM "transactions"
WHERE "status" IN ('queued', 'processing', 'pending') AND "next_attempt_at" IS NOT NULL;--> statement-breakpoint
-- Autovacuum for production, per table: the defaults (a vacuum after 20% of a table changed) let dead rows pile up
-- in the tables every order rewrites. The queue and the wallets are small and churn: vacuumed after a few hundred dead
-- rows, unthrottled. The wallets and the transactions keep room on each page, so an update that changes no indexed
-- column (a balance; a claim, a move to pending) stays on its page (HOT) and writes no index entry. The large tables
-- are vacuumed after a small fraction changed. A partitioned table takes them on each partition (and each new
-- partition from src/db/partitions.ts).
DO $$
DECLARE
  hot constant text[][] := ARRAY[
    ['transaction_queue', 'autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000, autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 500, autovacuum_vacuum_cost_delay = 0'],
    ['wallets', 'fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0'],
    ['transactions', 'fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 1'],
    ['provider_attempts', 'autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 1'],
    ['webhook_deliveries', 'autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 1'],
    ['idempotency_records', 'autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 1']
  ];
  i int;
  leaf regclass;
BEGIN
  FOR i IN 1 .. array_length(hot, 1) LOOP
    FOR leaf IN
      SELECT c.oid::regclass FROM pg_class c
      WHERE c.relkind = 'r' AND (c.oid = hot[i][1]::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree(hot[i][1]::regclass) WHERE isleaf))
    LOOP
      EXECUTE format('ALTER TABLE %s SET (%s)', leaf, hot[i][2]);
    END LOOP;
  END LOOP;
END $$;
