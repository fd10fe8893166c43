import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { DbHandle } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { finalChannel, parseFinalAnnouncements } from "../../src/orders/announcements.ts";
import { asServiceRole } from "./database.ts";
import { childEnv, type StartedProcess, spawnProcess } from "./process.ts";
import { vtuTestConfig } from "./vtu-mock.ts";

const main = join(import.meta.dir, "../../src/main.ts");

/** The `vtu` entry of a providers file (under `providers:`) for a fake at `baseUrl`; its secrets are `vtuFileEnv`'s. */
export const vtuProviderEntry = (baseUrl: string) => `  vtu:
    base_url: ${baseUrl}
    api_key_env: DRILL_VTU_KEY
    secret_key_env: DRILL_VTU_SECRET
    callback_token_env: DRILL_VTU_CALLBACK_TOKEN
    callback_secret_env: DRILL_VTU_CALLBACK_SECRET
    timeout_ms: 1000
`;

export const vtuFileEnv: Record<string, string> = {
  DRILL_VTU_KEY: vtuTestConfig.apiKey,
  DRILL_VTU_SECRET: vtuTestConfig.secretKey,
  DRILL_VTU_CALLBACK_TOKEN: vtuTestConfig.callbackToken,
  DRILL_VTU_CALLBACK_SECRET: vtuTestConfig.callbackSecret,
};

/** Writes `text` as a providers file in a new temporary directory; `remove` deletes the directory. */
export async function writeProvidersFile(text: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "vend-drill-"));
  const path = join(dir, "providers.yaml");
  await writeFile(path, text);
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * `npm start`'s entry point as a real process on `databaseUrl`: API or worker. On one of the test run's
 * databases it connects as the run's service role, which owns nothing and may run no DDL, as production's
 * does. `entry` is another tree's src/main.ts when a bench compares an older commit.
 */
export function spawnService(
  databaseUrl: string,
  role: "api" | "worker",
  env: Record<string, string> = {},
  entry = main,
): StartedProcess {
  const args = role === "api" ? ["serve"] : ["work"];
  return spawnProcess(
    [process.execPath, entry, ...args],
    // With DATABASE_URL set private webhook targets are refused by default; test receivers are on 127.0.0.1.
    childEnv({
      DATABASE_URL: asServiceRole(databaseUrl),
      PORT: "0",
      RATE_LIMIT_PER_MINUTE: "0",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      ...env,
    }),
  );
}

export async function apiUrl(api: StartedProcess): Promise<string> {
  const [, url] = await api.waitFor(/listening on (http:\/\/[^\s]+)/);
  return url ?? "";
}

/** Counts transactions announced final (LISTEN; one announcement may name several), so a test waits for events rather than sleeping. */
export async function finalCounter(database: DbHandle) {
  let count = 0;
  const waiters: { target: number; resolve: () => void }[] = [];
  const unlisten = await database.listen(finalChannel, (payload) => {
    count += parseFinalAnnouncements(payload).length;
    for (const waiter of waiters.filter((w) => count >= w.target)) waiter.resolve();
  });
  return {
    get count() {
      return count;
    },
    reached(target: number, timeoutMs = 60_000): Promise<void> {
      if (count >= target) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${count}/${target} final after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          target,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    stop: unlisten,
  };
}

export interface LedgerSummary {
  transactions: number;
  final: number;
  notFinal: number;
  maxVendCount: number;
  ordersAtProvider: number;
  captures: number;
  releases: number;
  maxSettlementsPerTransaction: number;
  events: number;
  maxEventsPerTransaction: number;
  heldKobo: number;
}

/** What the books say after a drill: counts that prove "once and only once". */
export async function summarise(database: DbHandle): Promise<LedgerSummary> {
  const [row] = await queryRows<Record<string, number | string>>(
    database.db,
    sql`select
      (select count(*) from transactions) as transactions,
      (select count(*) from transactions where status in ('successful', 'failed')) as final,
      (select count(*) from transactions where status not in ('successful', 'failed')) as not_final,
      (select coalesce(max(vend_count), 0) from sandbox_orders) as max_vend_count,
      (select count(*) from sandbox_orders) as orders_at_provider,
      (select count(*) from ledger_entries where kind = 'capture') as captures,
      (select count(*) from ledger_entries where kind = 'release') as releases,
      (select coalesce(max(n), 0) from (select count(*) as n from ledger_entries where kind in ('capture', 'release') group by transaction_id) s) as max_settlements,
      (select count(*) from events) as events,
      (select coalesce(max(n), 0) from (select count(*) as n from events group by transaction_id) e) as max_events,
      (select coalesce(sum(held_kobo), 0) from wallets) as held`,
  );
  const n = (key: string) => Number(row?.[key] ?? -1);
  return {
    transactions: n("transactions"),
    final: n("final"),
    notFinal: n("not_final"),
    maxVendCount: n("max_vend_count"),
    ordersAtProvider: n("orders_at_provider"),
    captures: n("captures"),
    releases: n("releases"),
    maxSettlementsPerTransaction: n("max_settlements"),
    events: n("events"),
    maxEventsPerTransaction: n("max_events"),
    heldKobo: n("held"),
  };
}

/** Posts `count` vends spread over `urls`, `concurrency` at a time; returns the references. */
export async function vendMany(urls: string[], key: string, count: number, concurrency = 32): Promise<string[]> {
  const references: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const res = await fetch(`${urls[i % urls.length]}/api/v1/vend`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `drill-${i}` },
          body: JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 }),
        });
        const body = (await res.json()) as { data: { reference: string } };
        if (res.status !== 202) throw new Error(`vend ${i}: ${res.status} ${JSON.stringify(body)}`);
        references.push(body.data.reference);
      }
    }),
  );
  return references;
}

export async function fundDefaultAccount(url: string, key: string, kobo: number): Promise<void> {
  const res = await fetch(`${url}/api/v1/wallet/fund`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": "drill-fund" },
    body: JSON.stringify({ amount_kobo: kobo }),
  });
  if (res.status !== 200) throw new Error(`fund: ${res.status}`);
}
