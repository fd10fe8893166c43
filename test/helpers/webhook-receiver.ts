import { Webhook } from "standardwebhooks";
import { withTransaction } from "../../src/db/transaction.ts";
import { presentTransaction, type TransactionRow } from "../../src/orders/view.ts";
import { enqueueTransactionEvent } from "../../src/webhooks/statements/record-transaction-event.ts";
import { insertTransactions } from "./seed.ts";
import type { TestServer } from "./server.ts";

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`; any path is accepted. */
  url: string;
  /** Every request, failed ones included, in arrival order. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx. */
  accepted(): ReceivedWebhook[];
  /** Answer 500 to the next `n` requests. */
  failNext(n: number): void;
  /** Resolves when `count` requests have arrived in total (event-driven, no polling). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on a free port that records what it gets. */
export function startWebhookReceiver(): WebhookReceiver {
  const received: ReceivedWebhook[] = [];
  const acceptedIndexes = new Set<number>();
  const waiters: { count: number; resolve: () => void }[] = [];
  let failures = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const index = received.push({ path: new URL(request.url).pathname, headers, body: await request.text() }) - 1;
      const fail = failures > 0;
      if (fail) failures -= 1;
      else acceptedIndexes.add(index);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      return new Response(fail ? "nope" : "ok", { status: fail ? 500 : 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    accepted: () => received.filter((_, index) => acceptedIndexes.has(index)),
    failNext(n) {
      failures = n;
    },
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} requests`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    close: () => server.stop(true),
  };
}

export interface HangingReceiver {
  url: string;
  /** Requests that have arrived; none is ever answered, so this is also how many are in flight. */
  count(): number;
  /** Resolves when `count` requests have arrived (event-driven, no polling). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Stops the server and drops its open connections, so senders waiting on it fail at once. */
  close(): Promise<void>;
}

/** A receiver that accepts the connection and never answers: a dead endpoint behind a live load balancer. */
export function startHangingReceiver(): HangingReceiver {
  let count = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      count += 1;
      for (const waiter of waiters.filter((w) => count >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      return new Promise<Response>(() => {});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    count: () => count,
    waitFor(target, timeoutMs = 10_000) {
      if (count >= target) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`hanging receiver got ${count} of ${target} requests`)), timeoutMs);
        waiters.push({
          count: target,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: () => server.stop(true),
  };
}

/** Verifies a received webhook with the endpoint secret (Standard Webhooks); throws when it does not verify. */
export function verifyWebhook(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, request.headers);
}

/** A final transaction row for the account and mode, reported through the outbox as the processing code does. */
export async function enqueueTestEvent(
  server: TestServer,
  accountId: string,
  mode: "test" | "live" = "test",
  status: "successful" | "failed" = "successful",
): Promise<{ eventId: string; row: TransactionRow }> {
  const db = server.database.handle.db;
  const [row] = await insertTransactions(db, { accountId, mode, count: 1, overrides: { status } });
  if (!row) throw new Error("no transaction row inserted");
  const eventId = await withTransaction(db, (tx) => enqueueTransactionEvent(tx, row.accountId, presentTransaction(row)));
  return { eventId, row };
}
