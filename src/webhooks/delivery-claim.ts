import { sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { subscribedTo } from "../ledger/outbox.ts";

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  lease: Date;
  eventId: string;
  payload: Record<string, unknown>;
  endpointId: string;
  url: string;
  /** The current secret, then the previous one while its rotation overlap lasts. */
  secrets: string[];
  mode: "test" | "live";
  /**
   * Why the delivery must not be sent after all (the endpoint was disabled, or unsubscribed from the
   * event's type, after it was scheduled); null when it may be.
   */
  notSendable: "endpoint disabled" | "not subscribed" | null;
  /** The W3C traceparent stored with the event's transaction at acceptance, if it was traced. */
  traceContext: string | null;
}

export interface ClaimOptions {
  /** Deliveries to lease at most (the free slots). */
  limit: number;
  /** In-flight deliveries allowed per endpoint. */
  perEndpoint: number;
  /** Deliveries this process already has in flight, by endpoint id. */
  busy: ReadonlyMap<string, number>;
  leaseMs: number;
}

interface ClaimedRow {
  id: string;
  attempts: number;
  lease_expires_at: Date | string;
  event_id: string;
  payload: Record<string, unknown> | string;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  mode: "test" | "live";
  enabled: boolean;
  subscribed: boolean;
  trace_context: string | null;
}

/**
 * Leases up to `limit` due pending deliveries, oldest first, taking at most `perEndpoint` less what
 * is already `busy` for any one endpoint: a dead endpoint's backlog gets its few slots and no more,
 * and everyone else's deliveries are claimed beside it. Candidates are ranked per endpoint in one
 * scan of what is due (no per-endpoint index needed), then locked; rows another worker holds are
 * skipped, not waited for, and a row leased meanwhile fails the re-check. Deleted endpoints are
 * never claimed for. Deliveries of a disabled or unsubscribed endpoint are claimed with `notSendable`
 * set, so the caller retires them instead of sending.
 */
export async function claimDueDeliveries(db: Executor, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const busy = JSON.stringify(Object.fromEntries(options.busy));
  const rows = await queryRows<ClaimedRow>(
    db,
    sql`with ranked as (
          select d.id, d.endpoint_id, d.next_attempt_at,
                 row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rank
          from webhook_deliveries d
          join webhook_endpoints e on e.id = d.endpoint_id and e.deleted_at is null
          where d.status = 'pending' and d.next_attempt_at <= now()
            and (d.lease_expires_at is null or d.lease_expires_at <= now())
        ),
        candidates as (
          select id from ranked
          where rank <= ${options.perEndpoint}::int - coalesce((${busy}::jsonb ->> endpoint_id::text)::int, 0)
        ),
        picked as (
          select d.id from webhook_deliveries d
          where d.id in (select id from candidates) and d.status = 'pending'
            and (d.lease_expires_at is null or d.lease_expires_at <= now())
          order by d.next_attempt_at, d.id
          limit ${options.limit}::int
          for update skip locked
        )
        update webhook_deliveries d
        set lease_expires_at = now() + ${options.leaseMs}::int * interval '1 millisecond', updated_at = now()
        from picked, events ev, webhook_endpoints e
        where d.id = picked.id and ev.id = d.event_id and e.id = d.endpoint_id
        returning d.id, d.attempts, d.lease_expires_at, d.event_id, ev.payload, d.endpoint_id, e.url, e.secret, e.mode,
                  case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
                  e.enabled, ${subscribedTo("e", sql`ev.type`)} as subscribed,
                  (select t.trace_context from transactions t where t.id = ev.transaction_id) as trace_context`,
  );
  return rows.map((row) => ({
    id: row.id,
    attempts: Number(row.attempts),
    lease: new Date(row.lease_expires_at),
    eventId: row.event_id,
    payload: typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload,
    endpointId: row.endpoint_id,
    url: row.url,
    secrets: row.previous_secret ? [row.secret, row.previous_secret] : [row.secret],
    mode: row.mode,
    notSendable: !row.enabled ? "endpoint disabled" : !row.subscribed ? "not subscribed" : null,
    traceContext: row.trace_context,
  }));
}
