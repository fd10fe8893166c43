import type { Executor } from "../db/transaction.ts";
import { type ClaimLimits, claimDueDeliveryRows } from "./statements/claim-due-deliveries.ts";

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

/**
 * Leases up to `limit` due pending deliveries, oldest first, taking at most `perEndpoint` less what
 * is already `busy` for any one endpoint: a dead endpoint's backlog gets its few slots and no more,
 * and everyone else's deliveries are claimed beside it (`webhooks.claim_due_deliveries`). Deleted endpoints
 * are never claimed for. Deliveries of a disabled or unsubscribed endpoint are claimed with `notSendable`
 * set, so the caller retires them instead of sending.
 */
export async function claimDueDeliveries(db: Executor, options: ClaimLimits): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const rows = await claimDueDeliveryRows(db, options);
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
