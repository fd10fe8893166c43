import { and, asc, eq, sql } from "drizzle-orm";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { products, sandboxOrders } from "../db/schema/index.ts";
import { randomBase62 } from "../lib/random.ts";
import { sandboxMeterCustomer, sandboxSmartcardCustomer } from "../verification/sandbox.ts";
import {
  type CustomerInfo,
  type CustomerQuery,
  type ProviderAdapter,
  type ProviderNotFound,
  type ProviderOrder,
  type ProviderOutcome,
  ProviderUnavailableError,
} from "./types.ts";

type OrderRow = typeof sandboxOrders.$inferSelect;
type Plan = Pick<OrderRow, "status" | "eventualStatus"> & {
  result: Record<string, string>;
  callbackDueAt: Date | null;
  timeoutFirst: boolean;
};

/** Electricity success values, derived from the reference so a re-query answers the same. */
function electricityResult(order: ProviderOrder): Record<string, string> {
  const digits = [...order.reference].map((c) => c.charCodeAt(0) % 10).join("");
  const token = `${digits}00000000000000000000`.slice(0, 20).replace(/(\d{4})(?=\d)/g, "$1-");
  const units = (order.amountKobo / 100 / 209.5).toFixed(1);
  return { token, units: `${units} kWh`, receipt_number: `SBX-RCPT-${order.reference.slice(4, 16).toUpperCase()}` };
}

function successResult(order: ProviderOrder, partial: boolean): Record<string, string> {
  if (order.service === "electricity") return electricityResult(order);
  if (order.service === "data" && order.requestedMb !== undefined) {
    return { delivered_mb: String(partial ? Math.floor(order.requestedMb / 2) : order.requestedMb) };
  }
  return {};
}

/** DECISIONS 12: the destination's last four digits choose the outcome. */
function planFor(order: ProviderOrder, callbackDelayMs: number): Plan {
  const later = new Date(Date.now() + callbackDelayMs);
  const base = { eventualStatus: null, result: {}, callbackDueAt: null, timeoutFirst: false };
  switch (order.destination.slice(-4)) {
    case "1111":
      return { ...base, status: "failed", result: { message: "Sandbox: declined (destination ends in 1111)" } };
    case "2222":
      return {
        ...base,
        status: "pending",
        eventualStatus: "successful",
        result: successResult(order, false),
        callbackDueAt: later,
      };
    case "3333":
      return {
        ...base,
        status: "pending",
        eventualStatus: "failed",
        result: { message: "Sandbox: declined after review (3333)" },
        callbackDueAt: later,
      };
    case "4444":
      return { ...base, status: "pending" };
    case "5555":
      return { ...base, status: "successful", result: successResult(order, false), timeoutFirst: true };
    case "6666":
      return { ...base, status: "successful", result: successResult(order, true) };
    default:
      return { ...base, status: "successful", result: successResult(order, false) };
  }
}

function outcomeOf(row: OrderRow): ProviderOutcome {
  const { message, delivered_mb, ...result } = row.result;
  if (row.status === "failed")
    return { status: "failed", providerReference: row.providerReference, message: message ?? "Sandbox: declined" };
  if (row.status === "pending") return { status: "pending", providerReference: row.providerReference };
  return {
    status: "successful",
    providerReference: row.providerReference,
    result,
    deliveredMb: delivered_mb === undefined ? undefined : Number(delivered_mb),
  };
}

/** The built-in test-mode provider. Its book of orders is the `sandbox_orders` table. */
export function createSandboxProvider(db: Database, config: Config["sandbox"]): ProviderAdapter {
  return {
    name: "sandbox",
    async vend(order) {
      const plan = planFor(order, config.callbackDelayMs);
      // A repeated request id is counted, never executed twice: the first order's answer stands.
      const [row] = await db
        .insert(sandboxOrders)
        .values({
          reference: order.reference,
          providerReference: `SBX-${randomBase62(12)}`,
          status: plan.status,
          eventualStatus: plan.eventualStatus,
          result: plan.result,
          callbackDueAt: plan.callbackDueAt,
        })
        .onConflictDoUpdate({ target: sandboxOrders.reference, set: { vendCount: sql`${sandboxOrders.vendCount} + 1` } })
        .returning()
        .prepare("sandbox_vend")
        .execute();
      if (!row) throw new ProviderUnavailableError("sandbox", "order not recorded");
      // Simulated answer latency, after the order is on the provider's books (crash and throughput drills).
      if (config.latencyMs > 0) await Bun.sleep(config.latencyMs);
      if (plan.timeoutFirst && row.vendCount === 1)
        throw new ProviderUnavailableError("sandbox", "timed out (destination ends in 5555)");
      return outcomeOf(row);
    },
    async requery(order): Promise<ProviderOutcome | ProviderNotFound> {
      const [row] = await db.select().from(sandboxOrders).where(eq(sandboxOrders.reference, order.reference));
      return row ? outcomeOf(row) : { status: "not_found" };
    },
    async verifyCustomer(query: CustomerQuery): Promise<CustomerInfo | null> {
      if (query.service === "electricity") {
        const customer = sandboxMeterCustomer(query.number, query.network);
        return customer && { customerName: customer.customerName, address: customer.address };
      }
      // Withdrawn bouquets included: a sandbox customer's bouquet must not change when operators edit the catalogue.
      const bouquets = await db
        .select({ name: products.name })
        .from(products)
        .where(and(eq(products.network, query.network), eq(products.service, "cable")))
        .orderBy(asc(products.sortOrder), asc(products.code));
      const customer = sandboxSmartcardCustomer(
        query.number,
        bouquets.map((b) => b.name),
      );
      return (
        customer && { customerName: customer.customerName, currentBouquet: customer.currentBouquet, dueDate: customer.dueDate }
      );
    },
  };
}

/** Pending sandbox orders whose callback is due: they take their eventual status now. */
export async function takeDueSandboxCallbacks(db: Database, limit: number): Promise<OrderRow[]> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(sandboxOrders)
      .where(sql`${sandboxOrders.callbackSentAt} is null and ${sandboxOrders.callbackDueAt} <= now()`)
      .orderBy(asc(sandboxOrders.callbackDueAt))
      .limit(limit)
      .for("update", { skipLocked: true });
    const taken: OrderRow[] = [];
    for (const order of due) {
      const status = order.eventualStatus ?? order.status;
      const [row] = await tx
        .update(sandboxOrders)
        .set({ status, callbackSentAt: sql`now()` })
        .where(eq(sandboxOrders.reference, order.reference))
        .returning();
      if (row) taken.push(row);
    }
    return taken;
  });
}

/** Puts a callback back in the queue after a failed send. */
export async function retrySandboxCallback(db: Database, reference: string, afterMs: number): Promise<void> {
  await db
    .update(sandboxOrders)
    .set({ callbackSentAt: null, callbackDueAt: new Date(Date.now() + afterMs) })
    .where(eq(sandboxOrders.reference, reference));
}
