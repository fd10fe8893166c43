import { and, asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { decodeRow, preparedStatement } from "../../db/rows.ts";
import { products, sandboxOrders } from "../../db/schema/index.ts";
import { groupCommit } from "../../lib/group-commit.ts";
import { randomBase62 } from "../../lib/random.ts";
import {
  type CustomerInfo,
  type CustomerQuery,
  type ProviderAdapter,
  type ProviderNotFound,
  type ProviderOrder,
  type ProviderOutcome,
  ProviderUnavailableError,
} from "../types.ts";
import { sandboxCallbackChannel } from "./callback-queue.ts";
import type { SandboxConfig } from "./config.ts";
import { sandboxMeterCustomer, sandboxSmartcardCustomer } from "./customers.ts";
import { sandboxName, sandboxScenarioFor } from "./defaults.ts";

type Plan = Pick<OrderRow, "status" | "eventualStatus"> & {
  result: Record<string, string>;
  /** The callback's delay; the due instant is the database's `now()` plus it. */
  callbackAfterMs: number | null;
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

/** The destination's last four digits choose the outcome (the table in defaults.ts). */
function planFor(order: ProviderOrder, callbackDelayMs: number): Plan {
  const scenario = sandboxScenarioFor(order.destination);
  const eventualStatus = scenario.eventualStatus ?? null;
  const finalStatus = eventualStatus ?? scenario.status;
  let result: Record<string, string> = {};
  if (scenario.message !== undefined) result = { message: scenario.message };
  else if (finalStatus === "successful") result = successResult(order, scenario.partial ?? false);
  return {
    status: scenario.status,
    eventualStatus,
    result,
    callbackAfterMs: eventualStatus ? callbackDelayMs : null,
    timeoutFirst: scenario.timeoutFirst ?? false,
  };
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

interface NewOrder {
  reference: string;
  providerReference: string;
  status: string;
  eventualStatus: string | null;
  result: string;
  /** Null without a callback. */
  callbackAfterMs: number | null;
}

/**
 * Orders on the sandbox's books, written on every test-mode vend, many in ONE statement (its text built once):
 * a repeated request id is counted, never executed twice. Rows are written in reference order, so two
 * workers' batches never wait on each other in a cycle. When a callback is to come, a NOTIFY on
 * `sandboxCallbackChannel` (delivered on commit) tells the callback queues, which then sleep until it is due.
 */
const recordOrders = preparedStatement<{ [K in keyof NewOrder]: NewOrder[K][] }, Record<string, unknown>>(
  () => sql`with recorded as (
      insert into sandbox_orders (reference, provider_reference, status, eventual_status, result, callback_due_at)
      select reference, provider_reference, status, eventual_status, result::jsonb, now() + after_ms * interval '1 millisecond'
      from unnest(${sql.placeholder("reference")}::text[], ${sql.placeholder("providerReference")}::text[],
                  ${sql.placeholder("status")}::text[], ${sql.placeholder("eventualStatus")}::text[],
                  ${sql.placeholder("result")}::text[], ${sql.placeholder("callbackAfterMs")}::int[])
        as i(reference, provider_reference, status, eventual_status, result, after_ms)
      order by reference
      on conflict (reference) do update set vend_count = sandbox_orders.vend_count + 1
      returning *
    )
    select r.*,
           (select pg_notify(${sandboxCallbackChannel}, min(reference)) from recorded
            where callback_due_at is not null and callback_sent_at is null having count(*) > 0) as callback_announced
    from recorded r`,
);

type OrderRow = typeof sandboxOrders.$inferSelect;

/**
 * The vends of concurrent jobs recorded together (group-committed like the worker's completions): those
 * that arrive while one statement is in flight go in the next. A request id twice in one batch (a re-send
 * racing its first send) is recorded in a second statement, after the first.
 */
function orderBook(db: Database): (order: NewOrder) => Promise<OrderRow> {
  const record = groupCommit<NewOrder, OrderRow>(async (_key, orders) => {
    const results: (OrderRow | Error)[] = [];
    let left = orders.map((order, index) => ({ order, index }));
    while (left.length > 0) {
      // Each reference once per statement; a second one waits for the next.
      const now: typeof left = [];
      const later: typeof left = [];
      const seen = new Set<string>();
      for (const item of left) {
        if (seen.has(item.order.reference)) later.push(item);
        else {
          seen.add(item.order.reference);
          now.push(item);
        }
      }
      left = later;
      const column = <K extends keyof NewOrder>(key: K) => now.map(({ order }) => order[key]);
      const rows = await recordOrders(db, {
        reference: column("reference"),
        providerReference: column("providerReference"),
        status: column("status"),
        eventualStatus: column("eventualStatus"),
        result: column("result"),
        callbackAfterMs: column("callbackAfterMs"),
      });
      const byReference = new Map(rows.map((raw) => [String(raw.reference), decodeRow(sandboxOrders, raw)]));
      for (const { order, index } of now) results[index] = byReference.get(order.reference) ?? new Error("order not recorded");
    }
    return results;
  }, 256);
  return (order) => record("orders", order);
}

/** The built-in test-mode provider. Its book of orders is the `sandbox_orders` table. */
export function createSandboxProvider(db: Database, config: SandboxConfig): ProviderAdapter {
  const book = orderBook(db);
  return {
    name: sandboxName,
    async vend(order) {
      const plan = planFor(order, config.callbackDelayMs);
      // A repeated request id is counted, never executed twice: the first order's answer stands.
      const row = await book({
        reference: order.reference,
        providerReference: `SBX-${randomBase62(12)}`,
        status: plan.status,
        eventualStatus: plan.eventualStatus,
        result: JSON.stringify(plan.result),
        // Null without a callback.
        callbackAfterMs: plan.callbackAfterMs,
      });
      if (!row) throw new ProviderUnavailableError(sandboxName, "order not recorded");
      // Simulated answer latency, after the order is on the provider's books (crash and throughput drills).
      if (config.latencyMs > 0) await Bun.sleep(config.latencyMs);
      if (plan.timeoutFirst && row.vendCount === 1)
        throw new ProviderUnavailableError(sandboxName, `timed out (destination ends in ${order.destination.slice(-4)})`);
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
