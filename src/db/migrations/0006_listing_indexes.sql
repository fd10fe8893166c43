CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "id";--> statement-breakpoint
DROP INDEX "idempotency_scope_idx";--> statement-breakpoint
DROP INDEX "idempotency_expiry_idx";--> statement-breakpoint
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_scope_idx" PRIMARY KEY("scope","method","path","key");--> statement-breakpoint
CREATE INDEX "idempotency_expiry_idx" ON "idempotency_records" USING brin ("expires_at");--> statement-breakpoint
CREATE INDEX "transactions_destination_listing_idx" ON "transactions" USING btree ("destination","account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_client_reference_listing_idx" ON "transactions" USING btree ("client_reference" text_pattern_ops,"account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "transactions"."client_reference" is not null;--> statement-breakpoint
CREATE INDEX "transactions_destination_trgm_idx" ON "transactions" USING gin ("destination" gin_trgm_ops);
