-- Request logs (src/request-logs/): every answered API request, written in batches a moment after the answer.
-- Indexes kept to three, since every request writes a row: a key's own records newest first, one request by its
-- id, and a BRIN summary of the arrival time for retention and time ranges (rows arrive in time order).
CREATE TABLE "request_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"request_id" text NOT NULL,
	"account_id" uuid,
	"mode" text,
	"key_id" uuid,
	"key_prefix" text,
	"operator" text,
	"method" text NOT NULL,
	"route" text NOT NULL,
	"path" text NOT NULL,
	"query" text,
	"status" smallint NOT NULL,
	"error_code" text,
	"idempotency_key" text,
	"idempotent_replayed" boolean DEFAULT false NOT NULL,
	"duration_ms" real NOT NULL,
	"client_ip" text,
	"user_agent" text,
	"request_body" text,
	"request_body_truncated" boolean DEFAULT false NOT NULL,
	"response_body" text,
	"response_body_truncated" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "request_logs_scope_idx" ON "request_logs" USING btree ("account_id","mode","id" DESC NULLS LAST) WHERE "request_logs"."account_id" is not null;--> statement-breakpoint
CREATE INDEX "request_logs_request_id_idx" ON "request_logs" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "request_logs_created_brin_idx" ON "request_logs" USING brin ("created_at");