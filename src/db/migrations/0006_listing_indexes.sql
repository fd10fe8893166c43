CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "transactions_status_listing_idx" ON "transactions" USING btree ("status","account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_network_listing_idx" ON "transactions" USING btree ("network","account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_service_listing_idx" ON "transactions" USING btree ("service","account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_destination_listing_idx" ON "transactions" USING btree ("destination","account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_client_reference_listing_idx" ON "transactions" USING btree ("client_reference" text_pattern_ops,"account_id","mode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "transactions"."client_reference" is not null;--> statement-breakpoint
CREATE INDEX "transactions_destination_trgm_idx" ON "transactions" USING gin ("destination" gin_trgm_ops);