import { eq, sql } from "drizzle-orm";
import type { Config, ProviderConfigs } from "../../src/config.ts";
import type { Database } from "../../src/db/client.ts";
import { transactions } from "../../src/db/schema/index.ts";
import { signTimestampedCallback } from "../../src/lib/shared/callback-signature.ts";
import { loadConfig } from "../../src/load-config.ts";
import { idem } from "./accounts.ts";
import type { HttpClient } from "./http.ts";
import { changeTransactions } from "./queue.ts";
import { waitUntil } from "./wait.ts";

const defaults = loadConfig({});

/**
 * Configuration for tests that run background work: fast polls, short delays, tiny schedules. A provider
 * given in `overrides.providers` replaces that provider's settings; the others keep these.
 */
export function fastProcessing(
  overrides: Omit<Partial<Config>, "providers" | "routing"> & {
    providers?: Partial<ProviderConfigs>;
    /** Merged into the fast routing below (routes, product codes, commissions…). */
    routing?: Partial<Config["routing"]>;
  } = {},
): Partial<Config> {
  const { providers, routing, ...rest } = overrides;
  return {
    maxWaitSeconds: 10,
    worker: { ...defaults.worker, concurrency: 8, pollMs: 50, leaseSeconds: 5, requerySchedule: [0.2] },
    providers: { ...defaults.providers, sandbox: { ...defaults.providers.sandbox, callbackDelayMs: 150 }, ...providers },
    // Breakers stay shut unless a test is about them; switches and shared breakers are re-read quickly.
    routing: { ...defaults.routing, breaker: { failures: 1000, cooldownMs: 1000 }, healthRefreshMs: 100, ...routing },
    // Tests run their webhook receivers on 127.0.0.1.
    webhooks: { ...defaults.webhooks, retrySchedule: [0, 0.1, 0.1, 0.1], timeoutMs: 2000, allowPrivateUrls: true },
    ...rest,
  };
}

/** A correctly signed sandbox callback, as `vendctl callbacks send` sends it. */
export function sandboxCallback(
  body: Record<string, unknown>,
  secret = defaults.providers.sandbox.callbackSecret,
  token = defaults.providers.sandbox.callbackToken,
) {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      authorization: `Bearer ${token}`,
      "x-provider-signature": signTimestampedCallback(secret, raw),
      "content-type": "application/json",
    },
  };
}

/** ₦100 of MTN airtime to `phone` (its last four digits choose the sandbox outcome); the reference. */
export async function vendAirtime(client: HttpClient, phone = "08031234567"): Promise<string> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
    idem(),
  );
  if (res.status !== 202) throw new Error(`vend failed: ${res.status} ${res.text}`);
  return res.json.data.reference;
}

/**
 * The order as `client` reads it once the worker has sent it and it stands pending with the provider. Pending
 * is not final, so a `wait` would not end before its whole budget; this ends as soon as the order is sent.
 */
export function untilPending(client: HttpClient, reference: string) {
  return waitUntil(
    async () => {
      const read = (await client.get(`/api/v1/transactions/${reference}`)).json.data;
      return read?.status === "pending" && read;
    },
    { what: `${reference} pending with the provider` },
  );
}

/** The transaction's row as stored. */
export async function transactionRow(db: Database, reference: string) {
  const [found] = await db.select().from(transactions).where(eq(transactions.reference, reference));
  if (!found) throw new Error(`no ${reference}`);
  return found;
}

/** Makes a claimed transaction's lease run out now, as if its worker had died. */
export const expireLease = (db: Database, reference: string) =>
  changeTransactions(
    db,
    sql`update transactions set lease_expires_at = now() - interval '1 second' where reference = ${reference}`,
  );
