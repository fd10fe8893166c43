import postgres from "postgres";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { migratedEmbeddedImage, runMigrations } from "../../src/db/migrate.ts";
import { grantServiceRole } from "../../src/db/service-grants.ts";
import { randomBase62 } from "../../src/lib/random.ts";

const baseUrl = process.env.DATABASE_URL || undefined;
/**
 * Set by `npm test` (scripts/test.ts) for the whole run, so every file in every parallel worker clones what
 * the runner made once: the run's id (its databases are named after it), the migrated PostgreSQL template,
 * and the file holding a migrated PGlite's data directory. Without them (`bun test FILE`) this process
 * makes its own, once.
 */
const shared = {
  runId: process.env.VEND_TEST_RUN,
  template: process.env.VEND_TEST_TEMPLATE,
  pgliteImage: process.env.VEND_TEST_PGLITE_IMAGE,
};
const runId = shared.runId ?? randomBase62(8).toLowerCase();
const templateName = shared.template ?? `vend_tpl_${runId}`;
let template: Promise<void> | undefined = shared.template ? Promise.resolve() : undefined;
let pgliteImage: Promise<Blob> | undefined;
const created: string[] = [];

/**
 * The role the run's service processes connect as: neither superuser nor owner of anything, with what
 * `vend migrate` grants a service role (DML only), granted on the template and so on every database cloned
 * from it. Made with the template, dropped with the run's databases.
 */
const serviceRole = `vend_svc_${runId}`;

/** `url` with the run's service role as its user, when it names one of this run's databases; else `url`. */
export function asServiceRole(url: string): string {
  // A cluster of a drill's own, reached by a multi-host URL (which URL cannot parse), is not the run's.
  if (!baseUrl || !URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (!parsed.pathname.startsWith(`/vend_t_${runId}_`)) return url;
  parsed.username = serviceRole;
  parsed.password = "";
  return parsed.toString();
}

function urlFor(database: string): string {
  const url = new URL(baseUrl ?? "");
  url.pathname = `/${database}`;
  return url.toString();
}

async function adminQuery(fn: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(baseUrl ?? "", { max: 1, onnotice: () => {} });
  try {
    await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Migrated once per test run; every test file's database is cloned from it. */
function ensureTemplate(): Promise<void> {
  template ??= (async () => {
    await adminQuery((sql) => sql.unsafe(`create database ${templateName}`));
    const handle = await openDatabase({ databaseUrl: urlFor(templateName), maxConnections: 1 });
    await runMigrations(handle);
    await handle.close();
    await adminQuery((sql) =>
      sql.unsafe(`do $$ begin create role ${serviceRole} login nosuperuser; exception when duplicate_object then null; end $$`),
    );
    await grantServiceRole(urlFor(templateName), serviceRole);
  })();
  return template;
}

/** A migrated in-memory PGlite's data directory: each test database starts from a copy (no initdb, no migrations). */
function migratedPgliteImage(): Promise<Blob> {
  pgliteImage ??= shared.pgliteImage
    ? Bun.file(shared.pgliteImage)
        .arrayBuffer()
        .then((bytes) => new Blob([bytes]))
    : migratedEmbeddedImage();
  return pgliteImage;
}

export interface TestDatabase {
  handle: DbHandle;
  /** Set on PostgreSQL: lets a test start extra processes against the same database. */
  url?: string;
  drop(): Promise<void>;
}

/** A new, migrated database: a PostgreSQL database when DATABASE_URL is set, else in-memory PGlite. */
export async function createTestDatabase(options: { maxConnections?: number } = {}): Promise<TestDatabase> {
  if (!baseUrl) {
    const handle = await openDatabase({ dataDir: "memory://", image: await migratedPgliteImage() });
    return { handle, drop: () => handle.close() };
  }
  await ensureTemplate();
  const name = `vend_t_${runId}_${randomBase62(8).toLowerCase()}`;
  await adminQuery((sql) => sql.unsafe(`create database ${name} template ${templateName}`));
  created.push(name);
  const url = urlFor(name);
  const handle = await openDatabase({ databaseUrl: url, maxConnections: options.maxConnections ?? 20 });
  return {
    handle,
    url,
    drop: async () => {
      await handle.close();
      await adminQuery((sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
    },
  };
}

/** The name of this process's template database (whether or not it exists yet). */
export function testTemplateName(): string {
  return templateName;
}

/**
 * For the test runner: makes this run's migrated template (PostgreSQL) or image (PGlite, written to
 * `imagePath`) and returns the environment that hands them, and the run's id, to every test file.
 */
export async function prepareSharedDatabases(imagePath: string): Promise<Record<string, string>> {
  if (!baseUrl) {
    await Bun.write(imagePath, await migratedPgliteImage());
    return { VEND_TEST_RUN: runId, VEND_TEST_PGLITE_IMAGE: imagePath };
  }
  await ensureTemplate();
  return { VEND_TEST_RUN: runId, VEND_TEST_TEMPLATE: templateName };
}

/**
 * Drops the migrated template of this process (a later createTestDatabase makes a new one). Benches call
 * it when they finish or are interrupted; test runs get it through dropAllTestDatabases. A template the
 * runner handed over is the runner's to drop.
 */
export async function dropTestTemplate(): Promise<void> {
  if (!baseUrl || !template || shared.template) return;
  // A template still being created is waited for, so its database cannot appear after the drop.
  await template.catch(() => undefined);
  template = undefined;
  await adminQuery(async (sql) => {
    await sql.unsafe(`drop database if exists ${templateName} with (force)`);
    // Its grants were on the run's databases, all dropped by now (the runner drops them first).
    await sql.unsafe(`drop role if exists ${serviceRole}`).catch(() => undefined);
  });
}

/** Drops the template and anything a crashed test file left behind. */
export async function dropAllTestDatabases(): Promise<void> {
  if (!baseUrl || !template) return;
  await template.catch(() => undefined);
  const names = created.splice(0);
  await adminQuery(async (sql) => {
    for (const name of names) await sql.unsafe(`drop database if exists ${name} with (force)`);
  });
  await dropTestTemplate();
}

/**
 * For the test runner, at the end: drops every database of this run, whichever worker made it (a worker
 * killed mid-file leaves its own behind), then the template.
 */
export async function dropRunDatabases(): Promise<void> {
  if (!baseUrl || !template) return;
  await adminQuery(async (sql) => {
    const rows = await sql<
      { datname: string }[]
    >`select datname from pg_database where starts_with(datname, ${`vend_t_${runId}_`})`;
    for (const { datname } of rows) await sql.unsafe(`drop database if exists ${datname} with (force)`);
  });
  await dropTestTemplate();
}

/**
 * A new, empty PostgreSQL database (no migration applied), for tests that migrate it as an operator would;
 * named after the run, so the runner drops it even when the test file dies. Needs DATABASE_URL.
 */
export async function createEmptyTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `vend_t_${runId}_${randomBase62(8).toLowerCase()}`;
  await adminQuery((sql) => sql.unsafe(`create database ${name} template template0`));
  created.push(name);
  return {
    url: urlFor(name),
    drop: () => adminQuery((sql) => sql.unsafe(`drop database if exists ${name} with (force)`)),
  };
}
