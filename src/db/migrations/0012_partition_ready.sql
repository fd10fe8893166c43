-- Hand-edited: drizzle-kit cannot name the primary keys it drops (PostgreSQL's default names, from 0000).
ALTER TABLE "provider_anomalies" DROP CONSTRAINT "provider_anomalies_transaction_id_transactions_id_fk";
--> statement-breakpoint
ALTER TABLE "provider_attempts" DROP CONSTRAINT "provider_attempts_transaction_id_transactions_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_events_id_fk";
--> statement-breakpoint
DROP INDEX "transactions_reference_idx";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_pkey";--> statement-breakpoint
ALTER TABLE "transactions" DROP CONSTRAINT "transactions_pkey";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_id_created_at_pk" PRIMARY KEY("id","created_at");--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_id_created_at_pk" PRIMARY KEY("id","created_at");--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_id_created_at_pk" PRIMARY KEY("id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_reference_idx" ON "transactions" USING btree ("reference","created_at");