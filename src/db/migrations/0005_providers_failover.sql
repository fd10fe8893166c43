CREATE TABLE "provider_anomalies" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"provider" text NOT NULL,
	"transaction_id" uuid,
	"reference" text,
	"message" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "provider_anomalies_kind" CHECK ("provider_anomalies"."kind" in ('double_delivery', 'low_balance'))
);
--> statement-breakpoint
CREATE TABLE "provider_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"transaction_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"request_id" text NOT NULL,
	"status" text NOT NULL,
	"message" text,
	"provider_reference" text,
	"sent_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"answered_at" timestamp (3) with time zone,
	"answer_ms" integer,
	CONSTRAINT "provider_attempts_status" CHECK ("provider_attempts"."status" in ('sent', 'pending', 'unknown', 'successful', 'failed', 'not_received'))
);
--> statement-breakpoint
CREATE TABLE "provider_breakers" (
	"provider" text NOT NULL,
	"service" text NOT NULL,
	"state" text NOT NULL,
	"consecutive_failures" integer NOT NULL,
	"open_until" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "provider_breakers_provider_service_pk" PRIMARY KEY("provider","service")
);
--> statement-breakpoint
CREATE TABLE "provider_states" (
	"provider" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp (3) with time zone,
	"balance_kobo" bigint,
	"balance_checked_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "provider_request_id" text;--> statement-breakpoint
ALTER TABLE "provider_anomalies" ADD CONSTRAINT "provider_anomalies_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD CONSTRAINT "provider_attempts_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "provider_anomalies_listing_idx" ON "provider_anomalies" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "provider_anomalies_once_idx" ON "provider_anomalies" USING btree ("kind","provider","reference") WHERE "provider_anomalies"."reference" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "provider_attempts_transaction_idx" ON "provider_attempts" USING btree ("transaction_id","provider");--> statement-breakpoint
CREATE UNIQUE INDEX "provider_attempts_request_idx" ON "provider_attempts" USING btree ("provider","request_id");--> statement-breakpoint
CREATE INDEX "provider_attempts_stats_idx" ON "provider_attempts" USING btree ("provider","sent_at");