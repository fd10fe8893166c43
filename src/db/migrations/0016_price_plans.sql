CREATE TABLE "price_plan_discounts" (
	"plan" text NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"discount_bps" integer NOT NULL,
	CONSTRAINT "price_plan_discounts_plan_scope_key_pk" PRIMARY KEY("plan","scope","key"),
	CONSTRAINT "price_plan_discounts_scope" CHECK ("price_plan_discounts"."scope" in ('service', 'network', 'product')),
	CONSTRAINT "price_plan_discounts_range" CHECK ("price_plan_discounts"."discount_bps" between 0 and 10000)
);
--> statement-breakpoint
CREATE TABLE "price_plans" (
	"name" text PRIMARY KEY NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Hand-written (here, not at the end: the accounts' foreign key below checks existing rows at once).
-- `standard` with no discounts of its own charges each product's own discount_bps: today's prices exactly.
INSERT INTO "price_plans" ("name", "description") VALUES ('standard', 'List prices: each product''s own discount');--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "price_plan" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "price_plan_discounts" ADD CONSTRAINT "price_plan_discounts_plan_price_plans_name_fk" FOREIGN KEY ("plan") REFERENCES "public"."price_plans"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_price_plan_price_plans_name_fk" FOREIGN KEY ("price_plan") REFERENCES "public"."price_plans"("name") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "accounts_price_plan_idx" ON "accounts" USING btree ("price_plan");