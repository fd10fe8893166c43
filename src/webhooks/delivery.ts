import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { withTransaction } from "../db/transaction.ts";
import type { Logger } from "../logger.ts";
import type { Metrics, WebhookOutcome } from "../metrics/metrics.ts";
import { type TraceSpan, type Tracing, tracingOff } from "../tracing/tracing.ts";
import type { ClaimedDelivery } from "./delivery-claim.ts";
import { recordEndpointHealth } from "./endpoint-health.ts";
import { postWebhook, type SendResult } from "./send.ts";
import { signedWebhookHeaders } from "./signing.ts";
import { recordAttempt } from "./statements/record-attempt.ts";
import { stopPendingDeliveries } from "./statements/stop-pending-deliveries.ts";
import { type HostResolver, privateUrlsAllowedFor, resolveWithSystemDns } from "./url-guard.ts";

export interface DeliveryDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** DNS for webhook hosts; the system resolver unless a test injects one. */
  resolveHost?: HostResolver;
  /** A span per send, in the trace of the event's transaction; none when absent. */
  tracing?: Tracing;
  /** Where attempts are counted; absent where nothing is exposed (tool-built deps). */
  metrics?: Metrics;
}

interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** What the client sees of a send in `GET /api/v1/events`: the kind of outcome, never a socket error. */
export function publicError(result: SendResult): string | null {
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
async function sendDelivery(
  deps: DeliveryDeps,
  delivery: ClaimedDelivery,
  workerId: string,
  span: TraceSpan,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const { timeoutMs, allowPrivateUrls } = deps.config.webhooks;
  const body = JSON.stringify(delivery.payload);
  const headers = {
    ...signedWebhookHeaders(delivery.secrets, delivery.eventId, body),
    ...(span.traceparent ? { traceparent: span.traceparent } : {}),
  };
  const result = await postWebhook(delivery.url, body, headers, {
    timeoutMs,
    allowPrivateUrls: privateUrlsAllowedFor(allowPrivateUrls, delivery.mode),
    resolveHost: deps.resolveHost ?? resolveWithSystemDns,
  });
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

/**
 * Logs the attempt, follows the endpoint's health (which may disable it) and moves the delivery on,
 * unless its lease was lost (reset by a resend, stopped by a delete or a disabling).
 */
async function recordOutcome(deps: DeliveryDeps, delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<string> {
  const attempt = delivery.attempts + 1;
  const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const delay = succeeded ? null : retryDelaySeconds(deps.config.webhooks.retrySchedule, attempt);
  return withTransaction(deps.db, async (tx) => {
    const disabled = await recordEndpointHealth(
      tx,
      { endpointId: delivery.endpointId, deliveryId: delivery.id, succeeded },
      deps.config.webhooks.disableAfterSeconds,
    );
    const status = succeeded ? "succeeded" : delay === null || disabled ? "failed" : "pending";
    if (disabled) deps.logger.warn({ endpointId: delivery.endpointId }, "webhook endpoint disabled: every attempt failed");
    await recordAttempt(tx, {
      deliveryId: delivery.id,
      lease: delivery.lease,
      attempt,
      ...outcome,
      status,
      retryInMs: status !== "pending" || delay === null ? null : Math.round(delay * 1000),
    });
    return status;
  });
}

/** Retires a delivery its endpoint no longer wants (disabled or unsubscribed since it was scheduled), unsent. */
function retireUnsendable(deps: DeliveryDeps, delivery: ClaimedDelivery, reason: string): Promise<void> {
  return stopPendingDeliveries(deps.db, { deliveryId: delivery.id, lease: delivery.lease }, reason);
}

/** The send's CLIENT span, continuing the trace of the event's transaction. */
function deliverySpan(deps: DeliveryDeps, delivery: ClaimedDelivery): TraceSpan {
  return (deps.tracing ?? tracingOff).startSpan("POST webhook", {
    kind: "client",
    parent: delivery.traceContext,
    attributes: {
      "http.request.method": "POST",
      "vend.webhook.event_id": delivery.eventId,
      "vend.webhook.delivery_id": delivery.id,
      "vend.webhook.attempt": delivery.attempts + 1,
    },
  });
}

const webhookOutcomes: Record<string, WebhookOutcome> = { succeeded: "delivered", pending: "retrying", failed: "failed" };

/** When the delivered event was created (its payload's `created_at`). */
function eventCreatedAt(delivery: ClaimedDelivery): Date | undefined {
  const createdAt = delivery.payload.created_at;
  return typeof createdAt === "string" ? new Date(createdAt) : undefined;
}

/** Sends one claimed delivery and records the attempt; never throws. */
export async function deliverClaimed(deps: DeliveryDeps, delivery: ClaimedDelivery, workerId: string): Promise<void> {
  if (delivery.notSendable) {
    const reason = delivery.notSendable;
    await retireUnsendable(deps, delivery, reason).catch((error: unknown) => {
      deps.logger.error({ workerId, deliveryId: delivery.id, err: error }, "unsendable webhook could not be retired");
    });
    deps.logger.info({ workerId, deliveryId: delivery.id, reason }, "webhook not sent");
    return;
  }
  const span = deliverySpan(deps, delivery);
  const outcome = await sendDelivery(deps, delivery, workerId, span).catch((error: unknown): AttemptOutcome => {
    // A bug (a stored secret that cannot sign, say) is one failed attempt, not a stuck pool slot.
    deps.logger.error({ workerId, deliveryId: delivery.id, err: error }, "webhook could not be sent");
    return { statusCode: null, error: "not sent: internal error", durationMs: 0 };
  });
  if (outcome.statusCode !== null) span.setAttributes({ "http.response.status_code": outcome.statusCode });
  if (outcome.error) span.fail(outcome.error);
  span.end();
  const log = { workerId, deliveryId: delivery.id, eventId: delivery.eventId, ...outcome };
  try {
    const status = await recordOutcome(deps, delivery, outcome);
    deps.metrics?.webhookAttempted(webhookOutcomes[status] ?? "failed", eventCreatedAt(delivery));
    deps.logger.info({ ...log, attempt: delivery.attempts + 1, status }, "webhook attempt");
  } catch (error) {
    // The lease runs out and the delivery is sent again: at least once, never lost.
    deps.logger.error({ ...log, err: error }, "webhook attempt could not be recorded");
  }
}
