import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { type ServiceBehindProxy, startServiceBehindProxy } from "../helpers/behind-proxy.ts";
import { processTestMs } from "../helpers/process.ts";
import type { Rewriter } from "../helpers/tcp-proxy.ts";

// Behind PgBouncer a statement of another request, pipelined by the driver, reached the server connection of
// this request's transaction and failed inside it (pipelining is now off behind a pooler, see
// pooler-pipelining.test.ts; this guard stays): PostgreSQL then answered the COMMIT with ROLLBACK, without an
// error, and the service answered 200 "Wallet funded" for money it never saved. A proxy between the service
// and PostgreSQL does the same: it slips a failing statement into the funding's transaction and hides its
// answers from the service.
const baseUrl = process.env.DATABASE_URL;
let behind: ServiceBehindProxy | undefined;

afterEach(async () => {
  await behind?.stop();
  behind = undefined;
});

/** A protocol message: its type, its length, its body. */
function message(type: string, body: string): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(Buffer.byteLength(body, "latin1") + 4);
  return Buffer.concat([Buffer.from(type, "latin1"), length, Buffer.from(body, "latin1")]);
}

const sync = message("S", "");
/** Execute of the unnamed portal, all rows: the statement runs. */
const execute = message("E", "\0\0\0\0\0");

function count(chunk: Buffer, part: Buffer): number {
  let n = 0;
  for (let at = chunk.indexOf(part); at >= 0; at = chunk.indexOf(part, at + 1)) n += 1;
  return n;
}

/**
 * Once the statement that stores an idempotency record (the last of an idempotent request's transaction) is
 * executed, a statement that fails is sent on the same connection, once; its answers (an error, then
 * ReadyForQuery) are taken out of what the service reads, so only the transaction's state tells. (The driver
 * may send the record's statement in two writes: its text first, to learn its parameter types, then its
 * execution.)
 */
function failingStatementAfterIdempotencyRecord(counter: { injected: number }): { toServer: Rewriter; toClient: Rewriter } {
  return {
    toServer(chunk, state) {
      if (counter.injected > 0) return chunk;
      if (chunk.includes("insert into idempotency_records")) state.storing = true;
      if (!state.storing || !chunk.includes(execute)) return chunk;
      counter.injected += 1;
      // The answers to pass before the hidden ones: up to the ReadyForQuery of each Sync of this chunk.
      Object.assign(state, { passReady: count(chunk, sync), pending: Buffer.alloc(0), hiding: true });
      return Buffer.concat([chunk, message("Q", "select 1 / 0\0")]);
    },
    toClient(chunk, state) {
      if (!state.hiding) return chunk;
      let pending = Buffer.concat([state.pending as Buffer, chunk]);
      const passed: Buffer[] = [];
      while (state.hiding && pending.length >= 5) {
        const length = pending.readInt32BE(1) + 1;
        if (pending.length < length) break;
        const one = pending.subarray(0, length);
        pending = pending.subarray(length);
        const ready = one[0] === 0x5a;
        if ((state.passReady as number) > 0) {
          passed.push(one);
          if (ready) state.passReady = (state.passReady as number) - 1;
        } else if (ready) state.hiding = false;
      }
      if (!state.hiding) passed.push(pending);
      state.pending = state.hiding ? pending : Buffer.alloc(0);
      return Buffer.concat(passed);
    },
  };
}

describe.skipIf(!baseUrl)("a COMMIT that PostgreSQL answers with ROLLBACK", () => {
  test(
    "is an error (500), never 200: the funding is not in the ledger, its key stays free, the books balance",
    async () => {
      behind = await startServiceBehindProxy({ args: ["serve"], env: { RATE_LIMIT_PER_MINUTE: "0" } });
      const { proxy, database, client } = behind;
      const fund = (idempotencyKey: string) =>
        client.post("/api/v1/wallet/fund", { amount_kobo: 50_000 }, { headers: { "idempotency-key": idempotencyKey } });
      expect((await fund("first")).status).toBe(200);

      // New connections, so every statement is parsed again and the proxy can see its text.
      const counter = { injected: 0 };
      proxy.rewrite(failingStatementAfterIdempotencyRecord(counter));
      proxy.disconnectAll();
      let answer = await fund("second");
      // The first request after the cut may meet a closed connection (503, nothing saved); the next one is parsed afresh.
      while (answer.status === 503 && counter.injected === 0) answer = await fund("second");
      expect(counter.injected).toBe(1);
      expect(answer.status).toBe(500);
      expect(answer.json.code).toBe("INTERNAL_ERROR");
      proxy.rewrite(undefined);

      const db = database.handle.db;
      const [books] = await queryRows<{ fundings: number; records: number; balance: number }>(
        db,
        sql`select (select count(*)::int from ledger_entries where kind = 'fund') as fundings,
                 (select count(*)::int from idempotency_records where key = 'second') as records,
                 (select sum(balance_kobo)::int from wallets) as balance`,
      );
      expect(books).toEqual({ fundings: 1, records: 0, balance: 50_000 });
      // The key was not stored: the retry funds once, and the books hold two fundings.
      const retried = await fund("second");
      expect(retried.status).toBe(200);
      expect(retried.headers.get("idempotent-replayed")).toBeNull();
      const [after] = await queryRows<{ fundings: number; balance: number }>(
        db,
        sql`select (select count(*)::int from ledger_entries where kind = 'fund') as fundings,
                 (select sum(balance_kobo)::int from wallets) as balance`,
      );
      expect(after).toEqual({ fundings: 2, balance: 100_000 });
      expect(await reconcileWallets(db)).toEqual([]);
    },
    processTestMs,
  );
});
