import { asc, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { sandboxOrders } from "../../db/schema/index.ts";
import { randomBase62 } from "../../lib/random.ts";
import { signTimestampedCallback } from "../../lib/shared/callback-signature.ts";
import type { Logger } from "../../logger.ts";
import type { SandboxConfig } from "./config.ts";
import { sandboxName } from "./defaults.ts";

type OrderRow = typeof sandboxOrders.$inferSelect;

/**
 * Pending sandbox orders whose callback is due take their eventual status now: one statement that
 * claims up to `limit` of them (skipping rows another process holds), earliest due first.
 */
async function takeDueSandboxCallbacks(db: Database, limit: number): Promise<OrderRow[]> {
  const due = db
    .select({ reference: sandboxOrders.reference })
    .from(sandboxOrders)
    .where(sql`${sandboxOrders.callbackSentAt} is null and ${sandboxOrders.callbackDueAt} <= now()`)
    .orderBy(asc(sandboxOrders.callbackDueAt))
    .limit(limit)
    .for("update", { skipLocked: true });
  const taken = await db
    .update(sandboxOrders)
    .set({ status: sql`coalesce(${sandboxOrders.eventualStatus}, ${sandboxOrders.status})`, callbackSentAt: sql`now()` })
    .where(inArray(sandboxOrders.reference, due))
    .returning();
  return taken.sort((a, b) => (a.callbackDueAt?.getTime() ?? 0) - (b.callbackDueAt?.getTime() ?? 0));
}

/** Puts a callback back in the queue after a failed send. */
async function retrySandboxCallback(db: Database, reference: string, afterMs: number): Promise<void> {
  await db
    .update(sandboxOrders)
    .set({ callbackSentAt: null, callbackDueAt: sql`now() + ${afterMs}::integer * interval '1 millisecond'` })
    .where(eq(sandboxOrders.reference, reference));
}

/**
 * Plays the sandbox provider's side: for each pending sandbox order whose callback is due, POSTs
 * a signed callback to this service's /callbacks/providers/sandbox, exactly as a provider would.
 */
export async function sendDueSandboxCallbacks(
  deps: { db: Database; logger: Logger; apiBaseUrl: string },
  sandbox: SandboxConfig,
): Promise<number> {
  const due = await takeDueSandboxCallbacks(deps.db, 20);
  for (const order of due) {
    const { message, delivered_mb, ...result } = order.result;
    const body = JSON.stringify({
      event_id: `sbx_evt_${randomBase62(16)}`,
      reference: order.reference,
      status: order.status === "failed" ? "failed" : "successful",
      provider_reference: order.providerReference,
      ...result,
      ...(delivered_mb === undefined ? {} : { delivered_mb: Number(delivered_mb) }),
      ...(message === undefined ? {} : { message }),
    });
    try {
      const response = await fetch(`${deps.apiBaseUrl}/callbacks/providers/${sandboxName}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${sandbox.callbackToken}`,
          // Signed at each attempt: a retry carries a fresh timestamp inside the replay window.
          "x-provider-signature": signTimestampedCallback(sandbox.callbackSecret, body),
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
      if (response.status >= 400)
        deps.logger.warn({ reference: order.reference, status: response.status }, "sandbox callback refused");
    } catch (error) {
      deps.logger.warn({ reference: order.reference, err: String(error) }, "sandbox callback not delivered; retrying");
      await retrySandboxCallback(deps.db, order.reference, 5000);
    }
  }
  return due.length;
}
