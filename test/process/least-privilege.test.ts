import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { randomBase62 } from "../../src/lib/random.ts";
import { createEmptyTestDatabase } from "../helpers/database.ts";
import { HttpClient } from "../helpers/http.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

/**
 * Two roles, as production runs them: the owner migrates (`vend migrate` with DATABASE_MIGRATION_URL) and the
 * service runs as a role that owns nothing and may run no DDL (no CREATE on the database or a schema). The
 * service's API and worker serve a vend to its end, a key revocation and a roll; the books reconcile.
 */
const baseUrl = process.env.DATABASE_URL;
const main = new URL("../../src/main.ts", import.meta.url).pathname;
const stackFrame = /^\s+at /m;
const role = `vend_svc_${randomBase62(8).toLowerCase()}`;
const adminToken = "least-privilege-admin-token-0123456789";
const processes: StartedProcess[] = [];
let dropDatabase: (() => Promise<void>) | undefined;

/** Runs `fn` as the cluster's superuser, on `url`'s database. */
async function asOwner<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await dropDatabase?.();
  if (baseUrl) await asOwner(baseUrl, (sql) => sql.unsafe(`drop role if exists ${role}`));
});

const urlAs = (url: string, user: string) => Object.assign(new URL(url), { username: user, password: "" }).toString();

async function run(args: string[], env: Record<string, string | undefined>) {
  const proc = spawnProcess([process.execPath, main, ...args], childEnv(env));
  processes.push(proc);
  return { code: await proc.finished(), output: proc.output() };
}

describe.skipIf(!baseUrl)("the service as a role that owns nothing", () => {
  test(
    "migrated by the owner, granted DML only; serve and work as that role: a vend to successful, a revocation and a roll, books balanced; before migrating, one line",
    async () => {
      const database = await createEmptyTestDatabase();
      dropDatabase = database.drop;
      await asOwner(database.url, (sql) => sql.unsafe(`create role ${role} login nosuperuser nocreatedb nocreaterole`));
      const ownerUrl = database.url;
      const serviceUrl = urlAs(database.url, role);
      const port = await freePort();
      const env = { DATABASE_URL: serviceUrl, PORT: String(port), ADMIN_TOKEN: adminToken };

      // Before the owner migrated: the service's role may not, and says so in one line.
      const early = await run(["serve"], env);
      expect(early.code).toBe(1);
      expect(early.output.trim().split("\n").at(-1)).toMatch(
        /^\d+ migrations are pending and this role may not apply them: run vend migrate as the owner \(DATABASE_MIGRATION_URL\) first$/,
      );
      expect(early.output).not.toMatch(stackFrame);

      const migrated = await run(["migrate"], { ...env, DATABASE_MIGRATION_URL: ownerUrl });
      expect(migrated.code).toBe(0);
      expect(migrated.output).toContain(`Then granted ${role} what the service uses.`);

      // What the role is: no superuser, owner of nothing, no DDL anywhere.
      const standing = await asOwner(ownerUrl, async (sql) => {
        const [row] = await sql<
          { superuser: boolean; owns: number; create_db: boolean; create_public: boolean; create_drizzle: boolean }[]
        >`select (select rolsuper from pg_roles where rolname = ${role}) as superuser,
                 (select count(*)::int from pg_class c join pg_roles r on r.oid = c.relowner where r.rolname = ${role})
                 + (select count(*)::int from pg_namespace n join pg_roles r on r.oid = n.nspowner where r.rolname = ${role})
                 + (select count(*)::int from pg_proc p join pg_roles r on r.oid = p.proowner where r.rolname = ${role}) as owns,
                 has_database_privilege(${role}, current_database(), 'CREATE') as create_db,
                 has_schema_privilege(${role}, 'public', 'CREATE') as create_public,
                 has_schema_privilege(${role}, 'drizzle', 'CREATE') as create_drizzle`;
        return row;
      });
      expect(standing).toEqual({ superuser: false, owns: 0, create_db: false, create_public: false, create_drizzle: false });

      const api = spawnProcess([process.execPath, main, "serve"], childEnv(env));
      const worker = spawnProcess([process.execPath, main, "work"], childEnv(env));
      processes.push(api, worker);
      const [, key = ""] = await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      await worker.waitFor(/Vend worker running/);
      const base = `http://127.0.0.1:${port}`;
      const client = new HttpClient(base, key);
      const funded = await client.post("/api/v1/wallet/fund", { amount_kobo: 100_000 }, { headers: { "idempotency-key": "f1" } });
      expect(funded.status).toBe(200);
      const vend = await client.post(
        "/api/v1/vend?wait=20",
        { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
        { headers: { "idempotency-key": "v1" } },
      );
      expect(vend.json.data.status).toBe("successful");

      // Key changes: a roll with grace 0, then an operator's revocation of the new key.
      const rolled = await client.post("/api/v1/keys/roll", { grace_seconds: 0 });
      expect(rolled.status).toBe(201);
      expect((await client.get("/api/v1/wallet")).status).toBe(401);
      const fresh = new HttpClient(base, rolled.json.data.key.key);
      const wallet = await fresh.get("/api/v1/wallet");
      expect(wallet.status).toBe(200);
      // Money: funded 1,000 NGN, one successful vend captured at its price, nothing held.
      expect(wallet.json.data).toMatchObject({ balance_kobo: 100_000 - vend.json.data.price_kobo, held_kobo: 0 });
      const revoked = await new HttpClient(base, adminToken).request("DELETE", `/admin/v1/keys/${rolled.json.data.key.id}`);
      expect(revoked.status).toBe(200);
      expect((await fresh.get("/api/v1/wallet")).status).toBe(401);
      const reconciliation = await new HttpClient(base, adminToken).get("/admin/v1/reconciliation");
      expect(reconciliation.status).toBe(200);
      expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });

      for (const started of [api, worker]) {
        expect(await started.stop("SIGTERM")).toBe(0);
        expect(started.output()).not.toMatch(stackFrame);
        expect(started.output()).not.toContain("permission denied");
      }
    },
    processTestMs,
  );
});
