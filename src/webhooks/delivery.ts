import { and, asc, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Config } from "../config.ts";
import type { Database, DbHandle } from "../db/client.ts";
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../db/schema/index.ts";
import type { Logger } from "../logger.ts";
import { webhookDueChannel } from "./outbox.ts";
import { checkPublicHost } from "./url-guard.ts";

export interface DeliveryDeps {
  db: Database;
  config: Config;
  logger: Logger;
}

interface ClaimedDelivery {
  id: string;
  attempts: number;
  lease: Date;
  eventId: string;
  payload: Record<string, unknown>;
  endpointId: string;
  url: string;
  secret: string;
  mode: "test" | "live";
}

interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const leaseMarginMs = 30_000;

/** Leases up to `limit` due pending deliveries; rows another worker holds are skipped, not waited for. */
async function claimDueDeliveries(deps: DeliveryDeps, limit: number): Promise<ClaimedDelivery[]> {
  const d = webhookDeliveries;
  const leaseMs = deps.config.webhooks.timeoutMs + leaseMarginMs;
  const due = deps.db
    .select({ id: d.id })
    .from(d)
    .where(
      and(
        eq(d.status, "pending"),
        lte(d.nextAttemptAt, sql`now()`),
        or(isNull(d.leaseExpiresAt), lte(d.leaseExpiresAt, sql`now()`)),
      ),
    )
    .orderBy(asc(d.nextAttemptAt))
    .limit(limit)
    .for("update", { skipLocked: true });
  const leased = await deps.db
    .update(d)
    .set({ leaseExpiresAt: sql`now() + ${leaseMs} * interval '1 millisecond'`, updatedAt: sql`now()` })
    .where(inArray(d.id, due))
    .returning({ id: d.id });
  if (leased.length === 0) return [];
  const rows = await deps.db
    .select({
      id: d.id,
      attempts: d.attempts,
      lease: d.leaseExpiresAt,
      eventId: events.id,
      payload: events.payload,
      endpointId: webhookEndpoints.id,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      mode: webhookEndpoints.mode,
    })
    .from(d)
    .innerJoin(events, eq(events.id, d.eventId))
    .innerJoin(webhookEndpoints, and(eq(webhookEndpoints.id, d.endpointId), isNull(webhookEndpoints.deletedAt)))
    .where(
      inArray(
        d.id,
        leased.map((row) => row.id),
      ),
    );
  return rows.flatMap((row) => (row.lease ? [{ ...row, lease: row.lease }] : []));
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `timed out after ${timeoutMs} ms`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 500) || "request failed";
}

/** One signed POST of the stored payload; every problem becomes an outcome, never an exception. */
async function sendWebhook(deps: DeliveryDeps, delivery: ClaimedDelivery): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { timeoutMs, allowPrivateUrls } = deps.config.webhooks;
  try {
    // Re-checked at send time: a live host may have been re-pointed at a private address since it was registered.
    if (delivery.mode === "live" && !allowPrivateUrls) {
      const check = await checkPublicHost(new URL(delivery.url).hostname);
      if (!check.ok) return { statusCode: null, error: `refused: ${check.reason}`, durationMs: elapsed() };
    }
    const body = JSON.stringify(delivery.payload);
    const timestamp = new Date();
    const signature = new Webhook(delivery.secret).sign(delivery.eventId, timestamp, body);
    const response = await fetch(delivery.url, {
      method: "POST",
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "vend-webhooks/1",
        "webhook-id": delivery.eventId,
        "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
        "webhook-signature": signature,
      },
    });
    await response.body?.cancel().catch(() => {});
    const ok = response.status >= 200 && response.status < 300;
    return { statusCode: response.status, error: ok ? null : `HTTP ${response.status}`, durationMs: elapsed() };
  } catch (error) {
    return { statusCode: null, error: describeError(error, timeoutMs), durationMs: elapsed() };
  }
}

/** Seconds until attempt `attempt + 1` (with ±10% jitter), or null when the schedule is exhausted. */
export function retryDelaySeconds(schedule: number[], attempt: number, random: () => number = Math.random): number | null {
  const base = schedule[attempt];
  if (base === undefined) return null;
  return base * (0.9 + 0.2 * random());
}

/** Logs the attempt and moves the delivery on, unless its lease was lost (reset by a resend, stopped by a delete). */
async function recordAttempt(deps: DeliveryDeps, delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<string> {
  const d = webhookDeliveries;
  const attempt = delivery.attempts + 1;
  const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const delay = succeeded ? null : retryDelaySeconds(deps.config.webhooks.retrySchedule, attempt);
  const status = succeeded ? "succeeded" : delay === null ? "failed" : "pending";
  await deps.db.transaction(async (tx) => {
    await tx.insert(webhookAttempts).values({ deliveryId: delivery.id, attempt, ...outcome });
    await tx
      .update(d)
      .set({
        status,
        attempts: attempt,
        nextAttemptAt: delay === null ? null : sql`now() + ${Math.round(delay * 1000)} * interval '1 millisecond'`,
        leaseExpiresAt: null,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        updatedAt: sql`now()`,
      })
      .where(and(eq(d.id, delivery.id), eq(d.status, "pending"), eq(d.leaseExpiresAt, delivery.lease)));
  });
  return status;
}

/**
 * One tick: claims due deliveries (`FOR UPDATE SKIP LOCKED`, short lease, so several workers can run),
 * sends them concurrently and records every attempt. Returns how many were claimed. Endpoint problems
 * are recorded as failed attempts, never thrown.
 */
export async function deliverDueWebhooks(deps: DeliveryDeps, options: { workerId: string; limit?: number }): Promise<number> {
  const claimed = await claimDueDeliveries(deps, options.limit ?? 20);
  await Promise.all(
    claimed.map(async (delivery) => {
      const outcome = await sendWebhook(deps, delivery);
      const log = { workerId: options.workerId, deliveryId: delivery.id, eventId: delivery.eventId, ...outcome };
      try {
        const status = await recordAttempt(deps, delivery, outcome);
        deps.logger.info({ ...log, attempt: delivery.attempts + 1, status }, "webhook attempt");
      } catch (error) {
        deps.logger.error({ ...log, err: error }, "webhook attempt could not be recorded");
      }
    }),
  );
  return claimed.length;
}

export interface WebhookDeliveryLoopOptions extends DeliveryDeps {
  database: DbHandle;
  signal: AbortSignal;
  workerId: string;
  /** Fallback poll when no NOTIFY arrives; default 1000 ms. */
  pollMs?: number;
  /** Deliveries claimed per tick; default 20. */
  limit?: number;
}

/**
 * Runs ticks until `signal` aborts: woken by NOTIFY on `webhookDueChannel`, polling every `pollMs` as a
 * fallback. Resolves once stopped, after the in-flight tick's sends have finished.
 */
export async function startWebhookDelivery(options: WebhookDeliveryLoopOptions): Promise<void> {
  const { database, signal, logger, workerId } = options;
  const pollMs = options.pollMs ?? 1000;
  const limit = options.limit ?? 20;
  let nudged = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    nudged = true;
    wake?.();
  };
  signal.addEventListener("abort", nudge);
  const unlisten = await database.listen(webhookDueChannel, nudge).catch((error: unknown) => {
    logger.error({ workerId, err: error }, "webhook delivery could not LISTEN; polling only");
    return undefined;
  });
  try {
    while (!signal.aborted) {
      nudged = false;
      let claimed = 0;
      try {
        claimed = await deliverDueWebhooks(options, { workerId, limit });
      } catch (error) {
        logger.error({ workerId, err: error }, "webhook delivery tick failed");
      }
      if (signal.aborted || nudged || claimed >= limit) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        wake = done;
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
      });
    }
  } finally {
    signal.removeEventListener("abort", nudge);
    await unlisten?.().catch(() => {});
  }
}
