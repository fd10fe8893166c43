import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export type Unlisten = () => Promise<void>;

/** One database, whichever engine: the same Drizzle API plus LISTEN/NOTIFY. */
export interface DbHandle {
  db: Database;
  kind: "postgres" | "pglite";
  /** Set for PostgreSQL, so tools can open a dedicated connection (migrations, LISTEN). */
  url?: string;
  listen(channel: string, onPayload: (payload: string) => void): Promise<Unlisten>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** PGlite directory; `memory://` keeps it in memory. */
  dataDir?: string;
  maxConnections?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DbHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections ?? 10);
  return openPglite(options.dataDir ?? "memory://");
}

function openPostgres(url: string, max: number): DbHandle {
  const client = postgres(url, { max, onnotice: () => {}, connection: { application_name: "vend" } });
  const db = drizzlePostgres(client, { schema }) as unknown as Database;
  return {
    db,
    kind: "postgres",
    url,
    async listen(channel, onPayload) {
      const subscription = await client.listen(channel, onPayload);
      return () => subscription.unlisten();
    },
    async notify(channel, payload) {
      await client.notify(channel, payload);
    },
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string): Promise<DbHandle> {
  if (!dataDir.startsWith("memory://")) mkdirSync(dataDir, { recursive: true });
  const client = new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: "pglite",
    listen: (channel, onPayload) => client.listen(channel, onPayload),
    async notify(channel, payload) {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    close: () => client.close(),
  };
}
