ALTER TABLE "idempotency_records" ALTER COLUMN "response_status" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_records" ALTER COLUMN "response_body" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "state";--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "response_headers";--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "locked_until";