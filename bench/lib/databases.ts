import postgres from "postgres";
import { randomBase62 } from "../../src/lib/random.ts";
import { createTestDatabase, dropTestTemplate, testTemplateName } from "../../test/helpers/database.ts";
import { onCleanup } from "./cleanup.ts";
import { serviceRoot, thisTree } from "./processes.ts";

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

const created: string[] = [];
let checkRegistered = false;

/**
 * Registered before the first database, so it runs after every other cleanup: drops the template, then
 * says whether any database this bench created is still there.
 */
function registerFinalCheck(base: string): void {
  if (checkRegistered) return;
  checkRegistered = true;
  onCleanup("check that every database is gone", async () => {
    await dropTestTemplate();
    const sql = postgres(base, { max: 1, onnotice: () => {} });
    try {
      const names = [...created, testTemplateName()];
      const left = await sql`select datname from pg_database where datname = any(${names})`;
      if (left.length > 0) console.error(`LEFT BEHIND: ${left.map((r) => r.datname).join(", ")}`);
      else console.log(`dropped every database it created (${created.join(", ")} and the template)`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
}

/**
 * A new database with the service's schema (cloned from the migrated template); dropped, template too, at
 * cleanup. For another tree's service (`root`, see processes.ts), a blank one its service migrates at its start.
 */
export async function serviceDatabase(base: string, root = serviceRoot): Promise<string> {
  if (root !== thisTree) return blankDatabase(base, "tree");
  registerFinalCheck(base);
  const database = await createTestDatabase({ maxConnections: 1 });
  const url = database.url ?? "";
  created.push(new URL(url).pathname.slice(1));
  onCleanup("drop the service database", () => database.drop());
  return url;
}

/** A new empty database on the server of `base` (an anchor's own); dropped at cleanup. */
export async function blankDatabase(base: string, purpose: string): Promise<string> {
  registerFinalCheck(base);
  const name = `vend_bench_${purpose}_${randomBase62(8).toLowerCase()}`;
  await admin(base, `create database ${name}`);
  created.push(name);
  onCleanup(`drop ${name}`, () => admin(base, `drop database if exists ${name} with (force)`));
  return urlFor(base, name);
}

/** A client the bench itself uses; closed at cleanup. */
export function benchClient(url: string, max = 1): postgres.Sql {
  const sql = postgres(url, { max, onnotice: () => {} });
  onCleanup("close a bench connection", () => sql.end({ timeout: 5 }));
  return sql;
}
