import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { HttpClient } from "../helpers/http.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

// Behind PgBouncer a statement of another request, retried by the driver on a connection this request's
// transaction had reserved, failed inside it: PostgreSQL then answers the COMMIT with ROLLBACK, without an
// error, and the service answered 200 "Wallet funded" for money it never saved. A proxy between the
// service and PostgreSQL reproduces what the service sees: the funding's COMMIT turned into a ROLLBACK.
const baseUrl = process.env.DATABASE_URL;
const main = join(import.meta.dir, "../../src/main.ts");
let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
let service: StartedProcess | undefined;

afterEach(async () => {
  await service?.stop("SIGKILL");
  await proxy?.close();
  await database?.drop();
  service = proxy = database = undefined;
});

/** A protocol message: its type, its length, its body. */
function message(type: string, body: string): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(Buffer.byteLength(body, "latin1") + 4);
  return Buffer.concat([Buffer.from(type, "latin1"), length, Buffer.from(body, "latin1")]);
}

/** A COMMIT as postgres.js sends it: a simple Query, or a Parse (named or not, no parameter types). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the Query message's length byte (11) is part of what is matched
const commitMessage = /Q\0\0\0\x0bcommit\0|P[\s\S]{4}([^\0]*)\0commit\0\0\0/;

/**
 * On each connection, once a statement storing an idempotency record has been parsed, the next COMMIT
 * parsed is sent as ROLLBACK: the transaction of an idempotent request (a funding) ends without saving.
 */
function rollbackIdempotentCommits(counter: { rewritten: number }) {
  return (chunk: Buffer, state: Record<string, unknown>): Buffer => {
    const text = chunk.toString("latin1");
    if (text.includes("insert into idempotency_records")) state.storing = true;
    if (!state.storing) return chunk;
    const commit = commitMessage.exec(text);
    if (!commit) return chunk;
    state.storing = false;
    counter.rewritten += 1;
    const rollback = commit[0].startsWith("Q") ? message("Q", "rollback\0") : message("P", `${commit[1]}\0rollback\0\0\0`);
    const original = Buffer.from(commit[0], "latin1");
    const at = chunk.indexOf(original);
    return Buffer.concat([chunk.subarray(0, at), rollback, chunk.subarray(at + original.length)]);
  };
}

describe.skipIf(!baseUrl)("a COMMIT that PostgreSQL answers with ROLLBACK", () => {
  test(
    "is an error (500), never 200: the funding is not in the ledger, its key stays free, the books balance",
    async () => {
      database = await createTestDatabase({ maxConnections: 2 });
      const upstream = new URL(baseUrl ?? "");
      proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
      service = spawnProcess(
        [process.execPath, main, "--no-worker"],
        childEnv({ DATABASE_URL: proxy.url(database.url ?? ""), PORT: "0", RATE_LIMIT_PER_MINUTE: "0" }),
      );
      const url = await apiUrl(service);
      const [, key] = await service.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      const client = new HttpClient(url, key);
      const fund = (idempotencyKey: string) =>
        client.post("/api/v1/wallet/fund", { amount_kobo: 50_000 }, { headers: { "idempotency-key": idempotencyKey } });
      expect((await fund("first")).status).toBe(200);

      // New connections, so every statement (the COMMIT too) is parsed again and the proxy can see its text.
      const counter = { rewritten: 0 };
      proxy.rewriteToServer(rollbackIdempotentCommits(counter));
      proxy.disconnectAll();
      let answer = await fund("second");
      // The first request after the cut may meet a closed connection (503, nothing saved); the next one is parsed afresh.
      while (answer.status === 503 && counter.rewritten === 0) answer = await fund("second");
      expect(counter.rewritten).toBe(1);
      expect(answer.status).toBe(500);
      expect(answer.json.code).toBe("INTERNAL_ERROR");
      proxy.rewriteToServer(undefined);

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
