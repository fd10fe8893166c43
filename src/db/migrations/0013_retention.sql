CREATE INDEX "sandbox_orders_retention_idx" ON "sandbox_orders" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhook_attempts_retention_idx" ON "webhook_attempts" USING btree ("attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_retention_idx" ON "webhook_deliveries" USING btree ("status","updated_at") WHERE "webhook_deliveries"."status" <> 'pending';