import { sql } from "drizzle-orm";
import type { DbHandle } from "../../src/db/client.ts";
import type { Executor } from "../../src/db/executor.ts";
import { queryRows } from "../../src/db/rows.ts";
import { type LedgerSummary, summarise } from "./cluster.ts";
import { waitUntil } from "./wait.ts";

/**
 * A steady client load for drills: vends (some long-polling with `wait`) and fundings spread over API URLs,
 * each request with its own Idempotency-Key. With `retry`, a request that meets a network error or a 503 is
 * sent again with the same key until it is acknowledged, as a well-behaved client does through a failover.
 */
export interface DrillLoadOptions {
  urls: string[];
  key: string;
  vends: number;
  concurrency: number;
  /** Every n-th vend long-polls with `?wait=waitSeconds` (0: none). */
  waitEvery?: number;
  waitSeconds?: number;
  /** Every n-th request is a funding of `fundKobo` instead of a vend (0: none). */
  fundEvery?: number;
  fundKobo?: number;
  /** The destinations vends cycle through (their last digits choose the sandbox outcome). */
  phones?: string[];
  /** Send again with the same key after a network error or a 503, for up to this long (0: never). */
  retryForMs?: number;
  /** Runs the load until it returns true (for a fixed duration), instead of `vends` requests. */
  until?: () => boolean;
  /** A distinct prefix for the keys of this load. */
  keyPrefix?: string;
}

export interface AcknowledgedVend {
  key: string;
  reference: string;
  /** The status in the 202 (final when a `wait` saw the order finish). */
  status: string;
  waited: boolean;
  answeredAt: number;
}

export interface DrillLoadResult {
  vends: AcknowledgedVend[];
  fundings: { key: string; entryId: number; amountKobo: number }[];
  /** Answers by status code, retries included ("network" for no answer). */
  answers: Record<string, number>;
  /** Every answer that was not 2xx, 503 or a network error: status and body. */
  unexpected: string[];
  /** Requests never acknowledged (retries ran out). */
  unacknowledged: string[];
  /** The first few network errors, for a failure message. */
  networkErrors: string[];
}

export async function runDrillLoad(options: DrillLoadOptions): Promise<DrillLoadResult> {
  const result: DrillLoadResult = { vends: [], fundings: [], answers: {}, unexpected: [], unacknowledged: [], networkErrors: [] };
  const phones = options.phones ?? ["08031234567"];
  const prefix = options.keyPrefix ?? "load";
  const count = (status: string) => {
    result.answers[status] = (result.answers[status] ?? 0) + 1;
  };
  let next = 0;
  const more = () => (options.until ? !options.until() : next < options.vends);
  async function one(i: number): Promise<void> {
    const fund = Boolean(options.fundEvery) && i % (options.fundEvery ?? 1) === 0;
    const waited = !fund && Boolean(options.waitEvery) && i % (options.waitEvery ?? 1) === 1;
    const key = `${prefix}-${i}`;
    const path = fund ? "/api/v1/wallet/fund" : `/api/v1/vend${waited ? `?wait=${options.waitSeconds ?? 10}` : ""}`;
    const body = fund
      ? { amount_kobo: options.fundKobo ?? 100_000 }
      : { product_code: "mtn-airtime", phone_number: phones[i % phones.length], amount_kobo: 10_000 };
    const deadline = performance.now() + (options.retryForMs ?? 0);
    for (let attempt = 0; ; attempt++) {
      const url = options.urls[(i + attempt) % options.urls.length];
      let status = "network";
      let text = "";
      try {
        const res = await fetch(`${url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
        });
        status = String(res.status);
        text = await res.text();
      } catch (error) {
        if (result.networkErrors.length < 5) result.networkErrors.push(`${key} at ${url}: ${String(error)}`);
      }
      count(status);
      if (status === "200" || status === "202") {
        const data = (JSON.parse(text) as { data: { reference: string; status: string; entry?: { id: number } } }).data;
        if (fund) result.fundings.push({ key, entryId: Number(data.entry?.id), amountKobo: options.fundKobo ?? 100_000 });
        else result.vends.push({ key, reference: data.reference, status: data.status, waited, answeredAt: Date.now() });
        return;
      }
      if (status !== "network" && status !== "503") result.unexpected.push(`${key}: ${status} ${text.slice(0, 300)}`);
      if (status !== "network" && status !== "503") return;
      if (performance.now() > deadline) {
        result.unacknowledged.push(key);
        return;
      }
      await Bun.sleep(100 + Math.random() * 100);
    }
  }
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (more()) await one(next++);
    }),
  );
  return result;
}

/** Waits until no order of the drill is left unfinished; the failure shows the books (and `detail`, the processes' output say). */
export async function everyOrderFinal(handle: DbHandle, detail: () => string = () => ""): Promise<LedgerSummary> {
  let books: LedgerSummary | undefined;
  await waitUntil(
    async () => {
      books = await summarise(handle);
      return books.notFinal === 0;
    },
    { what: "every order final", timeoutMs: 60_000, detail: () => `${JSON.stringify(books)}\n${detail()}` },
  );
  return books as LedgerSummary;
}

/** How many of the funding entries a load was answered with are in the ledger. */
export async function fundingsInLedger(db: Executor, fundings: DrillLoadResult["fundings"]): Promise<number> {
  const ids = `{${fundings.map((f) => f.entryId).join(",")}}`;
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from ledger_entries where kind = 'fund' and id = any(${ids}::bigint[])`,
  );
  return row?.n ?? 0;
}

/**
 * The books against the references a load was answered `202` for: orders and holds in all, and how many
 * of those references have no order.
 */
export async function acceptedInBooks(
  db: Executor,
  accepted: string[],
): Promise<{ transactions: number; holds: number; missing: number } | undefined> {
  const [counts] = await queryRows<{ transactions: number; holds: number; missing: number }>(
    db,
    sql`select (select count(*)::int from transactions) as transactions,
               (select count(*)::int from ledger_entries where kind = 'hold') as holds,
               (select count(*)::int from unnest(${`{${accepted.join(",")}}`}::text[]) as r(reference)
                 where not exists (select 1 from transactions t where t.reference = r.reference)) as missing`,
  );
  return counts;
}
