import postgres from "postgres";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { randomBase62 } from "../../src/lib/random.ts";

const baseUrl = process.env.DATABASE_URL || undefined;
const runId = randomBase62(8).toLowerCase();
const templateName = `vend_tpl_${runId}`;
let template: Promise<void> | undefined;
const created: string[] = [];

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
  })();
  return template;
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
    const handle = await openDatabase({ dataDir: "memory://" });
    await runMigrations(handle);
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
 * Drops the migrated template of this process (a later createTestDatabase makes a new one). Benches call
 * it when they finish or are interrupted; test runs get it through dropAllTestDatabases.
 */
export async function dropTestTemplate(): Promise<void> {
  if (!baseUrl || !template) return;
  // A template still being created is waited for, so its database cannot appear after the drop.
  await template.catch(() => undefined);
  template = undefined;
  await adminQuery((sql) => sql.unsafe(`drop database if exists ${templateName} with (force)`));
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
