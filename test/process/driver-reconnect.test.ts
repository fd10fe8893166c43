import { afterEach, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import postgres from "postgres";

// postgres.js (3.4.9) batches a write until the next check phase. When the connection closed before that
// batch went out, it cancelled the flush but kept its timer and bytes: the reconnected connection never
// sent its start-up message again, and every later query on it waited for ever or failed (after a failover
// the drill's worker stopped for good: its claims and its callback pass waited on such a connection). Patched
// in patches/postgres+3.4.9.patch, applied by `npm install` (patch-package).
const url = process.env.DATABASE_URL;
let sql: postgres.Sql | undefined;

afterEach(async () => {
  await sql?.end({ timeout: 1 }).catch(() => undefined);
  sql = undefined;
});

function within<T>(promise: Promise<T>, ms: number): Promise<T | "no answer"> {
  return Promise.race([promise, Bun.sleep(ms).then(() => "no answer" as const)]);
}

describe.skipIf(!url)("a connection that closes with a write still batched", () => {
  test("the next query reconnects and is answered; the batched one fails", async () => {
    const target = new URL(url ?? "");
    const sockets: Socket[] = [];
    // `socket` (a socket factory) is an option postgres.js takes but does not declare.
    const options = {
      max: 1,
      onnotice: () => {},
      connect_timeout: 2,
      socket: () => {
        const socket = connect({ host: target.hostname, port: Number(target.port || 5432) });
        sockets.push(socket);
        return socket;
      },
    };
    sql = postgres(url ?? "", options);
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);

    // Batched for the next check phase; the socket dies first (its error and close come on the next tick).
    const batched = sql`select 2 as two`.then(
      () => "answered",
      (error: { code?: string }) => `failed: ${error.code}`,
    );
    sockets.at(-1)?.destroy(new Error("connection lost"));
    expect(await within(batched, 5000)).toStartWith("failed");
    // A query sent before the close itself was seen fails too (CONNECTION_CLOSED): this one comes after.
    await Bun.sleep(100);

    const next = await within(
      sql`select 3 as three`.then(
        (rows) => [...rows],
        (error: { code?: string }) => `failed: ${error.code}`,
      ),
      5000,
    );
    expect(next).toEqual([{ three: 3 }]);
    expect(sockets.length).toBe(2);
  }, 20_000);
});
