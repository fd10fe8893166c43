CREATE TABLE "provider_float_samples" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"provider" text NOT NULL,
	"balance_kobo" bigint NOT NULL,
	"sampled_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"reconciled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "provider_float_topups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"provider" text NOT NULL,
	"amount_kobo" bigint NOT NULL,
	"note" text NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "provider_float_topups_amount" CHECK ("provider_float_topups"."amount_kobo" > 0)
);
--> statement-breakpoint
ALTER TABLE "provider_anomalies" DROP CONSTRAINT "provider_anomalies_kind";--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "cost_kobo" bigint;--> statement-breakpoint
CREATE INDEX "provider_float_samples_walk_idx" ON "provider_float_samples" USING btree ("provider","sampled_at");--> statement-breakpoint
CREATE INDEX "provider_float_topups_walk_idx" ON "provider_float_topups" USING btree ("provider","occurred_at");--> statement-breakpoint
ALTER TABLE "provider_anomalies" ADD CONSTRAINT "provider_anomalies_kind" CHECK ("provider_anomalies"."kind" in ('double_delivery', 'low_balance', 'catalogue_drift', 'float_mismatch'));