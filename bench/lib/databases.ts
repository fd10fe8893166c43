import postgres from "postgres";
import { randomBase62 } from "../../src/lib/random.ts";
import { createTestDatabase, dropTestTemplate } from "../../test/helpers/database.ts";
import { onCleanup } from "./cleanup.ts";

function urlFor(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin(base: string, statement: string): Promise<void> {
  const sql = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

let templateDropRegistered = false;

/** A new database with the service's schema (cloned from the migrated template); dropped, template too, at cleanup. */
export async function serviceDatabase(): Promise<string> {
  if (!templateDropRegistered) {
    templateDropRegistered = true;
    // Registered first so it runs last: after every clone of the template is gone.
    onCleanup("drop the template database", dropTestTemplate);
  }
  const database = await createTestDatabase({ maxConnections: 1 });
  onCleanup("drop the service database", () => database.drop());
  return database.url ?? "";
}

/** A new empty database on the server of `base` (an anchor's own); dropped at cleanup. */
export async function blankDatabase(base: string, purpose: string): Promise<string> {
  const name = `vend_bench_${purpose}_${randomBase62(8).toLowerCase()}`;
  await admin(base, `create database ${name}`);
  onCleanup(`drop ${name}`, () => admin(base, `drop database if exists ${name} with (force)`));
  return urlFor(base, name);
}

/** A client the bench itself uses; closed at cleanup. */
export function benchClient(url: string, max = 1): postgres.Sql {
  const sql = postgres(url, { max, onnotice: () => {} });
  onCleanup("close a bench connection", () => sql.end({ timeout: 5 }));
  return sql;
}
