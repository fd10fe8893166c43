import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound, validationError } from "../errors.ts";
import type { Scope } from "../lib/scope.ts";
import { resetFailedDeliveries } from "./statements/reset-failed-deliveries.ts";

type ResendRequest = components["schemas"]["FailedDeliveriesResendRequest"];
type ResendResult = components["schemas"]["FailedDeliveriesResend"];

/** Most failed deliveries one request schedules again. */
export const maxResendFailed = 1000;

/**
 * Schedules again, due now, the scope's failed deliveries of events created in `[from, to]` (optionally
 * to one endpoint), oldest event first, at most `maxResendFailed`, to endpoints that are current,
 * enabled and subscribed to the event's type. Only `failed` rows change, so a repeated request never
 * sends anything twice. One statement: picked, reset, counted, and the delivery loop woken.
 */
export async function resendFailedDeliveries(db: Executor, scope: Scope, input: ResendRequest): Promise<ResendResult> {
  const from = new Date(input.from);
  const to = new Date(input.to);
  if (from > to) throw validationError([{ field: "from", message: "must not be after to" }]);
  const endpointId = input.endpoint_id ?? null;
  if (endpointId) {
    const [found] = await queryRows<{ id: string }>(
      db,
      sql`select id from webhook_endpoints where id = ${endpointId}::uuid and account_id = ${scope.accountId}::uuid
          and mode = ${scope.mode} and deleted_at is null`,
    );
    if (!found) throw notFound("Webhook endpoint");
  }
  const row = await resetFailedDeliveries(db, scope, { from, to, endpointId, limit: maxResendFailed });
  const scheduled = Number(row.scheduled);
  return { scheduled, more: Number(row.matched) > maxResendFailed };
}
