import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { asDataDirError, type DataDirLock, lockDataDir } from "./data-dir-lock.ts";
import { EmbeddedEngine, type EmbeddedEngineEvents } from "./embedded.ts";
import { bindPool, type Database } from "./executor.ts";
import { ReplyWatchdog, type Target } from "./reply-watchdog.ts";
import * as schema from "./schema/index.ts";

export type { Database, Schema } from "./executor.ts";

export type Unlisten = () => Promise<void>;

/** A LISTEN whose round trips prove what has been delivered (see DbHandle.watch). */
export interface ChannelWatch {
  /**
   * One round trip on the listening connection, (re)starting the LISTEN first when the connection is new
   * (`fresh`: notifications before it may have been missed). When it resolves, every notification committed
   * before it was sent has been handed over. `databaseMs`: the database's clock during the round trip.
   */
  heartbeat(timeoutMs: number): Promise<{ databaseMs: number; fresh: boolean }>;
  /** Notifications reach `onPayload` before the committing statement's answer (embedded): nothing lags. */
  synchronous: boolean;
  close(): Promise<void>;
}

/** One database, whichever engine: the same Drizzle API plus LISTEN/NOTIFY. */
export interface DbHandle {
  db: Database;
  kind: "postgres" | "pglite";
  /** Set for PostgreSQL, so tools can open a dedicated connection (migrations, LISTEN). */
  url?: string;
  listen(channel: string, onPayload: (payload: string) => void): Promise<Unlisten>;
  notify(channel: string, payload: string): Promise<void>;
  /** LISTENs on a connection of its own (PostgreSQL) whose heartbeats prove delivery; closed with the handle. */
  watch(channel: string, onPayload: (payload: string) => void): ChannelWatch;
  /** Embedded only: the data directory as an image `openDatabase({ image })` starts a copy from (tests clone a migrated one). */
  dumpImage?(): Promise<Blob>;
  /** Resolves when the database answers (and, embedded, its directory takes writes) within `timeoutMs`; rejects otherwise. */
  probe(timeoutMs: number): Promise<void>;
  /**
   * The pool's connections: `max`, and `inUse`, those with a statement in flight (PostgreSQL: counted on
   * the watched sockets, so unknown under TLS; embedded: its one connection, busy or not).
   */
  connections(): { inUse: number | undefined; max: number };
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** PGlite directory; `memory://` keeps it in memory. */
  dataDir?: string;
  /** PGlite: start from this data directory image (`DbHandle.dumpImage`) instead of an empty one. */
  image?: Blob;
  maxConnections?: number;
  /** Bound on opening a PostgreSQL connection. */
  connectTimeoutSeconds?: number;
  /** PostgreSQL statement_timeout for every connection of the pool. */
  statementTimeoutMs?: number;
  /** Told when PostgreSQL stops answering, or when the embedded engine fails and is reopened. */
  events?: DatabaseEvents;
}

export interface DatabaseEvents extends EmbeddedEngineEvents {
  onUnreachable?(closedConnections: number): void;
}

export const defaultConnectTimeoutSeconds = 5;
export const defaultStatementTimeoutMs = 15_000;

export async function openDatabase(options: OpenDatabaseOptions): Promise<DbHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(options.dataDir ?? "memory://", options.events, options.image);
}

/**
 * Every wait is bounded, so an outage answers 503 instead of hanging: connecting (connect_timeout), a
 * statement (statement_timeout), a transaction left idle by a vanished client (its row locks are freed),
 * a reply that never comes (the watchdog), and reconnecting after errors (postgres.js's default back-off
 * grows to 20 s, which queued queries would wait out after the server is back).
 */
function openPostgres(url: string, options: OpenDatabaseOptions): DbHandle {
  const statementTimeoutMs = options.statementTimeoutMs ?? defaultStatementTimeoutMs;
  const connectTimeoutSeconds = options.connectTimeoutSeconds ?? defaultConnectTimeoutSeconds;
  const target = plainTarget(url);
  const watchdog = target
    ? new ReplyWatchdog({
        target,
        stallMs: 2000,
        probeTimeoutMs: 2000,
        silentLimitMs: statementTimeoutMs + 5000,
        onUnreachable: options.events?.onUnreachable,
      })
    : undefined;
  const max = options.maxConnections ?? 10;
  const client = postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
    ...(watchdog ? { socket: watchdog.socket } : {}),
    connection: {
      application_name: "vend",
      statement_timeout: statementTimeoutMs,
      idle_in_transaction_session_timeout: Math.max(statementTimeoutMs, 10_000),
    },
  });
  const db: Database = drizzlePostgres(client, { schema });
  bindPool(db, client);
  const watches = new Set<Omit<ChannelWatch, "synchronous">>();
  return {
    db,
    kind: "postgres",
    url,
    // Bounded both ways: during an outage postgres.js would wait for its LISTEN connection indefinitely.
    async listen(channel, onPayload) {
      const subscription = await withinMs(client.listen(channel, onPayload), connectTimeoutSeconds * 1000);
      return () => withinMs(subscription.unlisten(), 2000).catch(() => {});
    },
    async notify(channel, payload) {
      await client.notify(channel, payload);
    },
    watch(channel, onPayload) {
      const watch = watchOnOwnConnection(url, connectTimeoutSeconds, channel, onPayload);
      watches.add(watch);
      return {
        heartbeat: watch.heartbeat,
        synchronous: false,
        close: async () => {
          watches.delete(watch);
          await watch.close();
        },
      };
    },
    probe: (timeoutMs) =>
      withinMs(
        client`select 1`.then(() => undefined),
        timeoutMs,
      ),
    connections: () => ({ inUse: watchdog?.owingReplies, max }),
    async close() {
      await Promise.all([...watches].map((watch) => watch.close()));
      await client.end({ timeout: watchdog?.serverUnreachable ? 0 : 5 });
      watchdog?.stop();
    },
  };
}

/**
 * One connection that only LISTENs and answers heartbeats, so a heartbeat's answer follows every
 * notification committed before it was sent. A closed connection is reopened by the next heartbeat, which
 * then reports `fresh`; a heartbeat that does not answer in time drops the connection.
 */
function watchOnOwnConnection(
  url: string,
  connectTimeoutSeconds: number,
  channel: string,
  onPayload: (payload: string) => void,
): Omit<ChannelWatch, "synchronous"> {
  let generation = 0;
  let listeningOn = -1;
  let connection: postgres.Sql | undefined;
  let closed = false;
  // postgres.js delivers NotificationResponse to `onnotify` (how its own listen works); its types omit it.
  const open = () => postgres(url, listenOptions());
  const listenOptions = () => ({
    max: 1,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds,
    connection: { application_name: "vend-listen" },
    onnotify: (name: string, payload: string) => {
      if (name === channel) onPayload(payload);
    },
    onclose: () => {
      generation += 1;
    },
  });
  const drop = () => {
    const dropped = connection;
    connection = undefined;
    generation += 1;
    return dropped?.end({ timeout: 0 }).catch(() => {});
  };
  return {
    async heartbeat(timeoutMs) {
      if (closed) throw new Error("the watch is closed");
      if (!connection) connection = open();
      const sql = connection;
      const started = generation;
      let fresh = false;
      try {
        if (listeningOn !== started) {
          await withinMs(sql.unsafe(`listen "${channel}"`), timeoutMs);
          fresh = true;
        }
        const [row] = await withinMs(
          sql<{ now: number }[]>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as now`,
          timeoutMs,
        );
        if (generation !== started) throw new Error("the listening connection was replaced during the heartbeat");
        listeningOn = started;
        return { databaseMs: Number(row?.now), fresh };
      } catch (error) {
        await drop();
        throw error;
      }
    },
    async close() {
      closed = true;
      await drop();
    },
  };
}

/**
 * Where the pool connects, when the watchdog can read its sockets: one host (or Unix socket) without
 * TLS. Under TLS the bytes it would watch are wrapped by the TLS layer, so the driver's own socket is
 * used and only connect_timeout, statement_timeout and TCP keepalive bound an outage.
 */
function plainTarget(url: string): Target | undefined {
  const parsed = new URL(url);
  const ssl = parsed.searchParams.get("sslmode") ?? parsed.searchParams.get("ssl") ?? process.env.PGSSLMODE ?? process.env.PGSSL;
  if (ssl && ssl !== "disable" && ssl !== "false") return undefined;
  const host = parsed.searchParams.get("host") ?? decodeURIComponent(parsed.hostname);
  const port = Number(parsed.port || 5432);
  if (host.includes(",")) return undefined;
  if (host.startsWith("/")) return { path: `${host}/.s.PGSQL.${port}` };
  return { host: host.replace(/^\[|\]$/g, "") || "localhost", port };
}

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: "ETIMEDOUT" })), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

async function openPglite(dataDir: string, events: EmbeddedEngineEvents = {}, image?: Blob): Promise<DbHandle> {
  const inMemory = dataDir.startsWith("memory://");
  let lock: DataDirLock | undefined;
  if (!inMemory) {
    try {
      mkdirSync(dataDir, { recursive: true });
      // Before PGlite touches the directory: a second process must not even open it.
      lock = lockDataDir(dataDir);
    } catch (error) {
      throw asDataDirError(dataDir, error);
    }
    const first = !existsSync(join(dataDir, "PG_VERSION"));
    events.onProgress?.(`Opening the embedded database in ${resolve(dataDir)}${first ? " (first start: creating it)" : ""}`);
  }
  let engine: EmbeddedEngine;
  try {
    engine = await EmbeddedEngine.open(dataDir, events, image);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzlePglite(engine as unknown as PGlite, { schema }) as unknown as Database;
  return {
    db,
    kind: "pglite",
    listen: (channel, onPayload) => engine.listen(channel, onPayload),
    async notify(channel, payload) {
      await engine.query("select pg_notify($1, $2)", [channel, payload]);
    },
    // In-process: a notification reaches its listener while the committing statement's answer is read, so
    // there is nothing to wait for; the heartbeat only LISTENs the first time.
    watch(channel, onPayload) {
      let listening: Promise<() => Promise<void>> | undefined;
      let closed = false;
      return {
        synchronous: true,
        async heartbeat() {
          if (closed) throw new Error("the watch is closed");
          const fresh = listening === undefined;
          listening ??= engine.listen(channel, onPayload);
          await listening;
          return { databaseMs: Date.now(), fresh };
        },
        async close() {
          closed = true;
          const unlisten = await listening?.catch(() => undefined);
          await unlisten?.();
        },
      };
    },
    probe: (timeoutMs) => withinMs(engine.probe(), timeoutMs),
    dumpImage: () => engine.dump(),
    connections: () => ({ inUse: engine.busy ? 1 : 0, max: 1 }),
    async close() {
      try {
        await engine.close();
      } finally {
        lock?.release();
      }
    },
  };
}
