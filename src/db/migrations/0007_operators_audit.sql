CREATE TABLE "audit_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"operator_id" uuid,
	"operator_name" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"request_id" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"note" text
);
--> statement-breakpoint
CREATE TABLE "operators" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "operators_role_check" CHECK ("operators"."role" in ('viewer', 'operator', 'admin'))
);
--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "trace_context" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "stuck_raised_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "audit_entries_created_idx" ON "audit_entries" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_entries_target_idx" ON "audit_entries" USING btree ("target_type","target_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_entries_operator_idx" ON "audit_entries" USING btree ("operator_name","id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "operators_name_idx" ON "operators" USING btree ("name");--> statement-breakpoint
CREATE UNIQUE INDEX "operators_token_hash_idx" ON "operators" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "transactions_pending_idx" ON "transactions" USING btree ("created_at") WHERE "transactions"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "transactions_settlement_idx" ON "transactions" USING btree ("provider","completed_at") WHERE "transactions"."status" = 'successful';--> statement-breakpoint
CREATE FUNCTION "audit_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit_entries is append-only';
END;
$$;--> statement-breakpoint
CREATE TRIGGER "audit_entries_append_only" BEFORE UPDATE OR DELETE OR TRUNCATE ON "audit_entries" FOR EACH STATEMENT EXECUTE FUNCTION "audit_entries_append_only"();
