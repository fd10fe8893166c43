import { sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { requeue } from "./requeue.ts";

export const nudgeRequeryStatementName = "orders.nudge_requery";

const nudged = cte("nudged", ["id", "created_at", "next_attempt_at"]);

/** How an unsigned notification names an order at its provider: the request id it was sent under, or the provider's reference. */
export interface NamedAtProvider {
  requestId?: string;
  providerReference?: string;
}

/**
 * Brings forward the re-query of the order `named` at `provider` (due now), when that order is pending with
 * this provider; nothing else changes. Returns the references of the orders it moved.
 */
export async function nudgeRequery(db: Executor, provider: string, named: NamedAtProvider): Promise<string[]> {
  if (!named.requestId && !named.providerReference) return [];
  const rows = await queryRows<{ reference: string }>(
    db,
    sql`${statementLabel(nudgeRequeryStatementName)}with nudged as (
        update transactions t
        set next_attempt_at = now()
        from provider_attempts a
        where a.transaction_id = t.id and a.provider = ${provider}
          and (a.request_id = ${named.requestId ?? null} or a.provider_reference = ${named.providerReference ?? null})
          and t.provider = ${provider} and t.status = 'pending'
        returning t.id, t.created_at, t.next_attempt_at, t.reference
        ), ${requeue(nudged)}
        select reference from nudged`,
  );
  return rows.map((row) => row.reference);
}
