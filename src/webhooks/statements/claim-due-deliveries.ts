import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const claimDueDeliveriesStatementName = "webhooks.claim_due_deliveries";

export interface ClaimLimits {
  /** Deliveries to lease at most (the free slots). */
  limit: number;
  /** In-flight deliveries allowed per endpoint. */
  perEndpoint: number;
  /** Deliveries this process already has in flight, by endpoint id. */
  busy: ReadonlyMap<string, number>;
  leaseMs: number;
}

/** A leased delivery with what sending it needs: its event's payload, its endpoint, the trace to continue. */
export interface ClaimedDeliveryRow {
  id: string;
  attempts: number;
  lease_expires_at: Date | string;
  event_id: string;
  payload: Record<string, unknown> | string;
  endpoint_id: string;
  url: string;
  secret: string;
  /** The previous secret while its rotation overlap lasts (by the database's clock), else null. */
  previous_secret: string | null;
  mode: "test" | "live";
  enabled: boolean;
  /** Whether the endpoint is still subscribed to the event's type (`vend_webhook_subscribed`, migration 0020). */
  subscribed: boolean;
  trace_context: string | null;
}

/**
 * Leases up to `limit` due pending deliveries, oldest first, taking at most `perEndpoint` less what is already
 * `busy` for any one endpoint. Candidates are ranked per endpoint in one scan of what is due (no per-endpoint
 * index needed), then locked; rows another worker holds are skipped, not waited for, and a row leased meanwhile
 * fails the re-check. Deleted endpoints are never claimed for; a disabled or unsubscribed one's deliveries are
 * claimed with `enabled` and `subscribed` saying so.
 */
export function claimDueDeliveryRows(db: Executor, limits: ClaimLimits): Promise<ClaimedDeliveryRow[]> {
  const busy = JSON.stringify(Object.fromEntries(limits.busy));
  return queryRows<ClaimedDeliveryRow>(
    db,
    sql`${statementLabel(claimDueDeliveriesStatementName)}with ranked as (
          select d.id, d.endpoint_id, d.next_attempt_at,
                 row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rank
          from webhook_deliveries d
          join webhook_endpoints e on e.id = d.endpoint_id and e.deleted_at is null
          where d.status = 'pending' and d.next_attempt_at <= now()
            and (d.lease_expires_at is null or d.lease_expires_at <= now())
        ),
        candidates as (
          select id from ranked
          where rank <= ${limits.perEndpoint}::int - coalesce((${busy}::jsonb ->> endpoint_id::text)::int, 0)
        ),
        picked as (
          select d.id from webhook_deliveries d
          where d.id in (select id from candidates) and d.status = 'pending'
            and (d.lease_expires_at is null or d.lease_expires_at <= now())
          order by d.next_attempt_at, d.id
          limit ${limits.limit}::int
          for update skip locked
        )
        update webhook_deliveries d
        set lease_expires_at = now() + ${limits.leaseMs}::int * interval '1 millisecond', updated_at = now()
        from picked, events ev, webhook_endpoints e
        where d.id = picked.id and ev.id = d.event_id and e.id = d.endpoint_id
        returning d.id, d.attempts, d.lease_expires_at, d.event_id, ev.payload, d.endpoint_id, e.url, e.secret, e.mode,
                  case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
                  e.enabled, vend_webhook_subscribed(e.event_types, ev.type) as subscribed,
                  (select t.trace_context from transactions t where t.id = ev.transaction_id) as trace_context`,
  );
}
