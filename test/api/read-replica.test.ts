import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ConfigError } from "../../src/config.ts";
import { type Database, openDatabase } from "../../src/db/client.ts";
import { PrimaryPositions, parseLsn, primaryReads, type ReadRouter, startReplicaRouter } from "../../src/db/replica.ts";
import { queryRows } from "../../src/db/rows.ts";
import { notFound } from "../../src/errors.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createAccount } from "../../src/wallet/account-records.ts";
import { idem } from "../helpers/accounts.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { parsePrometheusText, total } from "../helpers/prometheus.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe("DATABASE_READ_URL and READ_REPLICA_MAX_LAG_MS", () => {
  const primary = "postgres://app@db1:5432/vend";
  test("unset: no replica; set: the URL (one host or several) and the bound, 1000 ms by default", () => {
    expect(loadConfig({ DATABASE_URL: primary }).readReplica).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: "postgres://app@r1:5432/vend" }).readReplica).toEqual({
      url: "postgres://app@r1:5432/vend",
      maxLagMs: 1000,
    });
    const multi = "postgresql://app@r1:5432,r2:5433/vend?target_session_attrs=prefer-standby";
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: multi, READ_REPLICA_MAX_LAG_MS: "250" }).readReplica).toEqual({
      url: multi,
      maxLagMs: 250,
    });
  });

  test.each([
    [{ DATABASE_READ_URL: "postgres://app@r1/vend" }, "DATABASE_READ_URL needs DATABASE_URL"],
    [{ DATABASE_URL: primary, DATABASE_READ_URL: "mysql://r1/vend" }, "DATABASE_READ_URL must be a postgres"],
    [
      { DATABASE_URL: primary, DATABASE_READ_URL: "postgres://r1/vend", READ_REPLICA_MAX_LAG_MS: "soon" },
      "READ_REPLICA_MAX_LAG_MS",
    ],
    [{ DATABASE_URL: primary, DATABASE_READ_URL: "postgres://r1/vend", READ_REPLICA_MAX_LAG_MS: "0" }, "READ_REPLICA_MAX_LAG_MS"],
  ])("%j is refused at start-up: %s", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("the lag by position", () => {
  test("LSNs compare as numbers; the age is that of the newest sampled primary position the replica has replayed", () => {
    expect(parseLsn("1/0") > parseLsn("0/FFFFFFFF")).toBe(true);
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) | 0xb374d848n);
    const positions = new PrimaryPositions();
    const now = performance.now();
    positions.add({ lsn: parseLsn("0/100"), at: now - 900 });
    positions.add({ lsn: parseLsn("0/200"), at: now - 400 });
    positions.add({ lsn: parseLsn("0/300"), at: now });
    expect(positions.ageOfNewestAtOrBelow(parseLsn("0/50"))).toBe(Number.POSITIVE_INFINITY);
    expect(positions.ageOfNewestAtOrBelow(parseLsn("0/250"))).toBeGreaterThanOrEqual(400);
    expect(positions.ageOfNewestAtOrBelow(parseLsn("0/250"))).toBeLessThan(900);
    // An idle primary: the replica has replayed everything the primary wrote, so the lag is the sample's age.
    expect(positions.ageOfNewestAtOrBelow(parseLsn("0/300"))).toBeLessThan(100);
  });
});

/**
 * The router on two real databases told apart by their accounts: the "primary" gets an account the
 * "replica" does not have, so every answer says where it was read.
 */
describe("the read router", () => {
  const opened: { close(): Promise<void> }[] = [];
  let primary: TestDatabase;
  let replica: TestDatabase;
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
  });
  afterAll(async () => {
    await primary?.drop();
    await replica?.drop();
  });

  const accountCount = async (db: Database) =>
    Number((await queryRows<{ n: number }>(db, sql`select count(*)::int as n from accounts`))[0]?.n);
  async function databases() {
    primary ??= await createTestDatabase({ maxConnections: 2 });
    replica ??= await createTestDatabase({ maxConnections: 2 });
    if ((await accountCount(primary.handle.db)) === 0) await createAccount(primary.handle.db, "on-the-primary");
    return { primaryDb: primary.handle.db, replicaHandle: replica.handle };
  }

  function recorder() {
    const reads: string[] = [];
    const lags: (number | undefined)[] = [];
    const failures: unknown[] = [];
    return {
      reads,
      lags,
      failures,
      events: {
        onRead: (target: string) => reads.push(target),
        onLag: (lag: number | undefined) => lags.push(lag),
        onReplicaFailure: (error: unknown) => failures.push(error),
      },
    };
  }

  /** A router that does not close the shared replica handle (the test file drops it). */
  function router(options: Omit<Parameters<typeof startReplicaRouter>[0], "replica"> & { replica: TestDatabase["handle"] }) {
    const started = startReplicaRouter({ ...options, replica: { ...options.replica, close: async () => {} } });
    opened.push(started);
    return started;
  }

  test("without a replica every read is on the primary", async () => {
    const { primaryDb } = await databases();
    const seen = recorder();
    const reads = primaryReads(() => primaryDb, seen.events);
    expect(await reads.read(accountCount)).toBe(1);
    expect(seen.reads).toEqual(["primary"]);
  });

  test("a replica under the lag bound serves reads; over it, or unmeasured, the primary does", async () => {
    const { primaryDb, replicaHandle } = await databases();
    let lagMs: number | "fails" = 100;
    const seen = recorder();
    const reads: ReadRouter = router({
      primary: () => primaryDb,
      replica: replicaHandle,
      maxLagMs: 1000,
      sampleEveryMs: 10,
      measureLag: async () => {
        if (lagMs === "fails") throw new Error("the replica does not answer");
        return lagMs;
      },
      events: seen.events,
    });
    const sampled = async (expected: number | undefined) => {
      const from = seen.lags.length;
      await waitUntil(() => seen.lags.slice(from).includes(expected), { what: `a sample of ${expected}` });
    };
    await sampled(100);
    expect(await reads.read(accountCount)).toBe(0);
    lagMs = 1500;
    await sampled(1500);
    expect(await reads.read(accountCount)).toBe(1);
    lagMs = 20;
    await sampled(20);
    expect(await reads.read(accountCount)).toBe(0);
    lagMs = "fails";
    await sampled(undefined);
    expect(await reads.read(accountCount)).toBe(1);
    expect(seen.reads).toEqual(["replica", "primary", "replica", "primary"]);
    expect(seen.failures).toEqual([]);
  });

  test("a sample too old is not trusted: the lag it measured plus its age must stay under the bound", async () => {
    const { primaryDb, replicaHandle } = await databases();
    const seen = recorder();
    const reads = router({
      primary: () => primaryDb,
      replica: replicaHandle,
      maxLagMs: 300,
      sampleEveryMs: 60_000,
      measureLag: async () => 100,
      events: seen.events,
    });
    await waitUntil(() => seen.lags.length > 0, { what: "the first sample" });
    expect(await reads.read(accountCount)).toBe(0);
    await Bun.sleep(250);
    expect(await reads.read(accountCount)).toBe(1);
    expect(seen.reads).toEqual(["replica", "primary"]);
  });

  test("a replica that is down: the read is answered by the primary, and the replica is left alone until a sample succeeds", async () => {
    const { primaryDb } = await databases();
    // Nothing listens there: connecting is refused at once.
    const down = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/vend`, maxConnections: 1 });
    opened.push(down);
    let sampleAllowed = true;
    const seen = recorder();
    const reads = router({
      primary: () => primaryDb,
      replica: down,
      maxLagMs: 1000,
      sampleEveryMs: 20,
      // Claims a current replica, as a last sample taken just before it went down would.
      measureLag: async () => {
        if (!sampleAllowed) throw new Error("not sampled");
        return 0;
      },
      events: seen.events,
    });
    await waitUntil(() => seen.lags.includes(0), { what: "a sample" });
    sampleAllowed = false;
    expect(await reads.read(accountCount)).toBe(1);
    expect(await reads.read(accountCount)).toBe(1);
    expect(seen.failures).toHaveLength(1);
    expect(seen.reads).toEqual(["primary", "primary"]);
  });

  test("a row the replica does not have yet is read on the primary; other errors are the read's own", async () => {
    const { primaryDb, replicaHandle } = await databases();
    const seen = recorder();
    const reads = router({
      primary: () => primaryDb,
      replica: replicaHandle,
      maxLagMs: 1000,
      sampleEveryMs: 10,
      measureLag: async () => 0,
      events: seen.events,
    });
    await waitUntil(() => seen.lags.length > 0, { what: "a sample" });
    const findAccount = async (db: Database) => {
      if ((await accountCount(db)) === 0) throw notFound("Account");
      return "found";
    };
    expect(await reads.read(findAccount)).toBe("found");
    await expect(reads.read((db) => queryRows(db, sql`select * from no_such_table`))).rejects.toThrow("no_such_table");
    expect(seen.failures).toEqual([]);
    expect(seen.reads).toEqual(["primary"]);
  });
});

/**
 * The whole service with DATABASE_READ_URL naming another database (not in recovery: no lag): operator and
 * catalogue reads show that database's rows, a client's own reads and the product lookup of a vend the
 * primary's.
 */
describe.skipIf(!onPostgres)("the service with a read replica (PostgreSQL)", () => {
  let server: TestServer;
  let replica: TestDatabase;
  afterAll(async () => {
    await server?.close();
    await replica?.drop();
  });

  test("operator reads and the catalogue on the replica; a client's reads after its writes on the primary", async () => {
    replica = await createTestDatabase({ maxConnections: 2 });
    await createAccount(replica.handle.db, "only-on-the-replica");
    // The catalogue differs on the replica, so a listing says where it was read.
    await replica.handle.db.execute(sql`update products set name = 'replica ' || name where code = 'mtn-airtime'`);
    const config = loadConfig({ DATABASE_URL: "postgres://unused", DATABASE_READ_URL: replica.url ?? "" });
    const { readReplica } = config;
    server = await startTestServer({ readReplica, operations: { ...config.operations, metricsEnabled: true } });
    const account = await server.createAccount("on-the-primary");
    const client = server.client(account.testKey);
    expect((await client.post("/api/v1/wallet/fund", { amount_kobo: 1_000_000 }, idem())).status).toBe(200);
    await waitUntil(
      async () =>
        (await server.admin.get("/admin/v1/accounts")).json.data.items.some(
          (a: { name: string }) => a.name === "only-on-the-replica",
        ),
      { what: "the first sample: admin reads on the replica" },
    );

    const names = (await server.admin.get("/admin/v1/accounts")).json.data.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(["only-on-the-replica"]);
    // Not there yet as far as the replica knows: the primary answers.
    expect((await server.admin.get(`/admin/v1/accounts/${account.id}`)).status).toBe(200);
    const products = (await client.get("/api/v1/catalogue/products")).json.data as { code: string; name: string }[];
    expect(products.find((p) => p.code === "mtn-airtime")?.name).toStartWith("replica ");

    const vend = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
      idem(),
    );
    expect(vend.status).toBe(202);
    const listed = (await client.get("/api/v1/transactions")).json.data.items as { reference: string }[];
    expect(listed.map((t) => t.reference)).toEqual([vend.json.data.reference]);
    // The hold of the vend just accepted is there: the wallet is read on the primary.
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet.balance_kobo).toBe(1_000_000);
    expect(wallet.held_kobo).toBeGreaterThan(0);

    const families = parsePrometheusText((await server.anonymous.get("/metrics")).text);
    expect(total(families, "vend_db_reads_total", { target: "replica" })).toBeGreaterThanOrEqual(3);
    expect(total(families, "vend_db_replica_lag_seconds")).toBe(0);
  });
});
