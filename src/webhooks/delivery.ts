import { and, eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Config } from "../config.ts";
import type { Database, DbHandle } from "../db/client.ts";
import { webhookAttempts, webhookDeliveries } from "../db/schema/index.ts";
import { webhookDueChannel } from "../ledger/outbox.ts";
import type { Logger } from "../logger.ts";
import { type ClaimedDelivery, claimDueDeliveries } from "./claim.ts";
import { postWebhook, type SendResult } from "./send.ts";
import { type HostResolver, resolveWithSystemDns } from "./url-guard.ts";

export interface DeliveryDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** DNS for webhook hosts; the system resolver unless a test injects one. */
  resolveHost?: HostResolver;
}

interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

// A lease outlives the longest send (the timeout) by this much, so a live send never loses its row.
const leaseMarginMs = 30_000;

/** What the client sees of a send in `GET /api/v1/events`: the kind of outcome, never a socket error. */
function publicError(result: SendResult): string | null {
  switch (result.kind) {
    case "response":
      return result.statusCode >= 200 && result.statusCode < 300 ? null : `HTTP ${result.statusCode}`;
    case "refused":
      return "refused: private or loopback address";
    case "timeout":
      return "timed out";
    case "unreachable":
      return "unreachable";
  }
}

/** One signed POST of the stored payload; every problem becomes an outcome, never an exception. */
async function sendDelivery(deps: DeliveryDeps, delivery: ClaimedDelivery, workerId: string): Promise<AttemptOutcome> {
  const started = performance.now();
  const { timeoutMs, allowPrivateUrls } = deps.config.webhooks;
  const body = JSON.stringify(delivery.payload);
  const timestamp = new Date();
  const result = await postWebhook(
    delivery.url,
    body,
    {
      "content-type": "application/json",
      "user-agent": "vend-webhooks/1",
      "webhook-id": delivery.eventId,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": new Webhook(delivery.secret).sign(delivery.eventId, timestamp, body),
    },
    { timeoutMs, allowPrivateUrls, resolveHost: deps.resolveHost ?? resolveWithSystemDns },
  );
  if (result.kind === "refused" || result.kind === "unreachable") {
    // The detail (an error code or address range, not the destination) stays in the server log.
    deps.logger.warn(
      { workerId, deliveryId: delivery.id, endpointId: delivery.endpointId, outcome: result.kind, detail: result.detail },
      "webhook not delivered",
    );
  }
  return {
    statusCode: result.kind === "response" ? result.statusCode : null,
    error: publicError(result),
    durationMs: Math.round(performance.now() - started),
  };
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

/** Sends one claimed delivery and records the attempt; never throws. */
async function deliverClaimed(deps: DeliveryDeps, delivery: ClaimedDelivery, workerId: string): Promise<void> {
  const outcome = await sendDelivery(deps, delivery, workerId).catch((error: unknown): AttemptOutcome => {
    // A bug (a stored secret that cannot sign, say) is one failed attempt, not a stuck pool slot.
    deps.logger.error({ workerId, deliveryId: delivery.id, err: error }, "webhook could not be sent");
    return { statusCode: null, error: "not sent: internal error", durationMs: 0 };
  });
  const log = { workerId, deliveryId: delivery.id, eventId: delivery.eventId, ...outcome };
  try {
    const status = await recordAttempt(deps, delivery, outcome);
    deps.logger.info({ ...log, attempt: delivery.attempts + 1, status }, "webhook attempt");
  } catch (error) {
    // The lease runs out and the delivery is sent again: at least once, never lost.
    deps.logger.error({ ...log, err: error }, "webhook attempt could not be recorded");
  }
}

const claimOptions = (deps: DeliveryDeps, limit: number, busy: ReadonlyMap<string, number>) => ({
  limit,
  perEndpoint: deps.config.webhooks.endpointConcurrency,
  busy,
  leaseMs: deps.config.webhooks.timeoutMs + leaseMarginMs,
});

/**
 * One pass, for tests and tools: claims what is due (at most `limit`, default WEBHOOK_CONCURRENCY,
 * and at most WEBHOOK_ENDPOINT_CONCURRENCY per endpoint), sends it concurrently, records every
 * attempt and returns how many were claimed. Endpoint problems are recorded, never thrown.
 */
export async function deliverDueWebhooks(deps: DeliveryDeps, options: { workerId: string; limit?: number }): Promise<number> {
  const limit = options.limit ?? deps.config.webhooks.concurrency;
  const claimed = await claimDueDeliveries(deps.db, claimOptions(deps, limit, new Map()));
  await Promise.all(claimed.map((delivery) => deliverClaimed(deps, delivery, options.workerId)));
  return claimed.length;
}

export interface WebhookDeliveryLoopOptions extends DeliveryDeps {
  database: DbHandle;
  signal: AbortSignal;
  workerId: string;
  /** Fallback poll when no NOTIFY arrives; default 1000 ms. */
  pollMs?: number;
}

/**
 * The delivery pool: keeps up to WEBHOOK_CONCURRENCY deliveries in flight, at most
 * WEBHOOK_ENDPOINT_CONCURRENCY of them for any one endpoint, and claims again as soon as any send
 * ends, so one slow endpoint never holds up another's webhooks. Woken by NOTIFY on
 * `webhookDueChannel` and by freed slots, polling every `pollMs` as a fallback. Resolves once
 * stopped, after the sends in flight have finished (each is bounded by WEBHOOK_TIMEOUT_MS).
 */
export async function startWebhookDelivery(options: WebhookDeliveryLoopOptions): Promise<void> {
  const { database, signal, logger, workerId } = options;
  const pollMs = options.pollMs ?? 1000;
  const { concurrency } = options.config.webhooks;
  const inFlight = new Set<Promise<void>>();
  const busy = new Map<string, number>();
  // A nudge that arrives while the pool is claiming is remembered, so the next wait returns at once.
  let nudged = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    nudged = true;
    wake?.();
  };
  const waitForWork = () =>
    new Promise<void>((resolve) => {
      if (nudged) return resolve();
      const timer = setTimeout(resolve, pollMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
    });
  const track = (delivery: ClaimedDelivery) => {
    busy.set(delivery.endpointId, (busy.get(delivery.endpointId) ?? 0) + 1);
    const job: Promise<void> = deliverClaimed(options, delivery, workerId).finally(() => {
      const left = (busy.get(delivery.endpointId) ?? 1) - 1;
      if (left > 0) busy.set(delivery.endpointId, left);
      else busy.delete(delivery.endpointId);
      inFlight.delete(job);
      nudge();
    });
    inFlight.add(job);
  };

  signal.addEventListener("abort", nudge);
  const unlisten = await database.listen(webhookDueChannel, nudge).catch((error: unknown) => {
    logger.error({ workerId, err: error }, "webhook delivery could not LISTEN; polling only");
    return undefined;
  });
  try {
    while (!signal.aborted) {
      nudged = false;
      const free = concurrency - inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (free > 0) {
        try {
          claimed = await claimDueDeliveries(options.db, claimOptions(options, free, busy));
        } catch (error) {
          logger.error({ workerId, err: error }, "webhook delivery claim failed");
        }
      }
      for (const delivery of claimed) track(delivery);
      // Either every slot is taken or nothing more can be taken now: wait for a freed slot, a NOTIFY or the poll.
      if (!signal.aborted) await waitForWork();
    }
    await Promise.all(inFlight);
  } finally {
    signal.removeEventListener("abort", nudge);
    await unlisten?.().catch(() => {});
  }
}
