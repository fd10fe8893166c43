import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import type { Task } from "../../lib/job-queue.ts";
import { randomBase62 } from "../../lib/random.ts";
import type { Logger } from "../../logger.ts";
import { raiseStuck, stuckBatch } from "../../orders/statements/raise-stuck.ts";
import { presentAdminTransaction, type TransactionRow } from "../../orders/view.ts";
import { postWebhook } from "../../webhooks/send.ts";
import { signedWebhookHeaders } from "../../webhooks/signing.ts";
import { type HostResolver, resolveWithSystemDns } from "../../webhooks/url-guard.ts";

export interface StuckDeps {
  db: Database;
  config: Config;
  /** Read at each log line, so a logger swapped on this object is used from then on. */
  logger: Logger;
  /** DNS for the operator webhook's host; the system resolver unless a test injects one. */
  resolveHost?: HostResolver;
}

/** How often every worker process looks for stuck orders. */
export const stuckCheckMs = 60_000;

/**
 * POSTs `transaction.stuck` (the admin view of the order) to OPERATOR_WEBHOOK_URL, signed like client
 * webhooks with OPERATOR_WEBHOOK_SECRET. Once: a failure is logged at error and not retried (the order
 * stays listed at `GET /admin/v1/transactions?stuck=true`).
 */
async function notifyOperators(deps: StuckDeps, row: TransactionRow): Promise<void> {
  const { operatorWebhookUrl: url, operatorWebhookSecret: secret } = deps.config.operations;
  if (!url || !secret) return;
  const id = `evt_${randomBase62(24)}`;
  const createdAt = new Date();
  const body = JSON.stringify({
    id,
    type: "transaction.stuck",
    created_at: createdAt.toISOString(),
    data: presentAdminTransaction(row),
  });
  const fields = { reference: row.reference, eventId: id };
  try {
    const result = await postWebhook(url, body, signedWebhookHeaders(secret, id, body, createdAt), {
      timeoutMs: deps.config.webhooks.timeoutMs,
      // The operators' own endpoint, set by them: an internal address is expected.
      allowPrivateUrls: true,
      resolveHost: deps.resolveHost ?? resolveWithSystemDns,
    });
    if (result.kind === "response" && result.statusCode >= 200 && result.statusCode < 300) return;
    const outcome = result.kind === "response" ? `HTTP ${result.statusCode}` : result.kind;
    const detail = result.kind === "refused" || result.kind === "unreachable" ? result.detail : undefined;
    deps.logger.error({ ...fields, outcome, detail }, "operator webhook not delivered; not retried");
  } catch (error) {
    deps.logger.error({ ...fields, err: error }, "operator webhook could not be sent; not retried");
  }
}

/**
 * One pass: raises every pending order accepted more than STUCK_AFTER_MINUTES ago (on the database's clock)
 * and not raised yet, once each: a warn line (reference, account, provider, age) and, when
 * OPERATOR_WEBHOOK_URL is set, a signed `transaction.stuck` POST. Returns how many were raised.
 */
export async function raiseStuckOrders(deps: StuckDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const raised = await raiseStuck(deps.db, deps.config);
    for (const { row, ageMinutes } of raised) {
      deps.logger.warn(
        { reference: row.reference, accountId: row.accountId, provider: row.provider, ageMinutes },
        "order stuck pending; raised to operators",
      );
    }
    await Promise.all(raised.map(({ row }) => notifyOperators(deps, row)));
    total += raised.length;
    if (raised.length < stuckBatch) return total;
  }
}

/** The stuck-order check as periodic background work of every worker process. */
export function stuckOrdersTask(deps: StuckDeps): Task {
  return { name: "stuck orders", everyMs: stuckCheckMs, run: () => raiseStuckOrders(deps) };
}
