ALTER TABLE "sandbox_orders" ADD COLUMN "eventual_status" text;--> statement-breakpoint
ALTER TABLE "sandbox_orders" ADD COLUMN "callback_sent_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "sandbox_orders_callback_due_idx" ON "sandbox_orders" USING btree ("callback_due_at") WHERE "sandbox_orders"."callback_sent_at" is null;