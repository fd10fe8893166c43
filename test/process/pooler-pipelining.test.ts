import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { canRunPgbouncer, type Pgbouncer, startPgbouncer } from "../helpers/pgbouncer.ts";

// postgres.js pipelines a statement onto a connection still busy with another. Without named prepared
// statements it sends a statement with parameters in two steps: Parse and Describe ending in Flush, then,
// once described, Bind and Execute ending in Sync. PgBouncer counts the Syncs it has passed on and gives
// the server connection back to its pool at the last ReadyForQuery it expects: a statement pipelined behind
// another has its Parse and Describe on the server, no Sync yet, and its answer never reaches the client,
// whose query waits for ever (the pooled drill left 2 to 69 orders `processing` for good, their worker
// waiting on it). With one server connection for many clients this is met at once.
const runs = Boolean(process.env.DATABASE_URL) && canRunPgbouncer();
let database: TestDatabase | undefined;
let bouncer: Pgbouncer | undefined;
let handle: DbHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => undefined);
  await bouncer?.stop().catch(() => undefined);
  await database?.drop();
  handle = bouncer = database = undefined;
});

function within<T>(promise: Promise<T>, ms: number): Promise<T | "no answer"> {
  return Promise.race([promise, Bun.sleep(ms).then(() => "no answer" as const)]);
}

describe.skipIf(!runs)("behind PgBouncer in transaction mode with one server connection", () => {
  test("300 concurrent statements and 30 concurrent transactions over 4 client connections all answer, each transaction on its own", async () => {
    database = await createTestDatabase({ maxConnections: 2 });
    const directUrl = database.url ?? "";
    bouncer = await startPgbouncer(directUrl, { poolMode: "transaction", serverSlots: 1 });
    handle = await openDatabase({ databaseUrl: bouncer.url, pooler: "transaction", directUrl, maxConnections: 4 });
    const db = handle.db;

    // Every other statement without parameters: sent in one step, it is the one another is pipelined behind.
    const statements = Array.from({ length: 300 }, (_, n) =>
      queryRows<{ n: number }>(db, n % 2 ? sql`select ${n}::int as n` : sql.raw(`select ${n}::int as n`)).then(([row]) => row?.n),
    );
    const transactions = Array.from({ length: 30 }, (_, n) =>
      withTransaction(db, async (tx) => {
        const [first] = await queryRows<{ txid: string }>(tx, sql`select txid_current()::text as txid`);
        const [second] = await queryRows<{ txid: string; n: number }>(
          tx,
          sql`select txid_current()::text as txid, ${n}::int as n`,
        );
        return { n: second?.n, txids: [first?.txid, second?.txid] };
      }),
    );
    const answered = await within(Promise.all([Promise.all(statements), Promise.all(transactions)]), 20_000);
    expect(answered).not.toBe("no answer");
    if (answered === "no answer") return;
    const [values, outcomes] = answered;
    // Each statement got its own answer.
    expect(values).toEqual(Array.from({ length: 300 }, (_, n) => n));
    // Each transaction saw one transaction id throughout, its own: no statement of another landed in it.
    expect(outcomes.map((o) => o.n)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    for (const { txids } of outcomes) expect(txids[0]).toBe(txids[1] as string);
    expect(new Set(outcomes.map((o) => o.txids[0])).size).toBe(30);
  }, 60_000);
});
