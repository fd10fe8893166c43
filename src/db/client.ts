import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Config } from "../config.ts";
import { asDataDirError, type DataDirLock, dataDirLockName, lockDataDir } from "./data-dir-lock.ts";
import { EmbeddedEngine, type EmbeddedEngineEvents } from "./embedded.ts";
import { clearDataDir, readEmbeddedImage } from "./embedded-image.ts";
import { bindPool, type Database } from "./executor.ts";
import { asksForTls, parsePostgresUrl, withFailoverDefaults } from "./postgres-url.ts";
import { makePrivate } from "./private-dir.ts";
import { ReplyWatchdog, type Target } from "./reply-watchdog.ts";
import * as schema from "./schema/index.ts";

export type { Database, Schema } from "./executor.ts";

export type Unlisten = () => Promise<void>;

/**
 * The `application_name` of every watching connection (DbHandle.watch): how many processes watch a channel is
 * the count of these sessions in the database.
 */
export const watchingSessionName = "vend-watch";

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
  /** Set for PostgreSQL: where the pool connects (a pooler, perhaps). */
  url?: string;
  /** Set for PostgreSQL: a connection with a session of its own (migrations, LISTEN); `url` unless pooled. */
  directUrl?: string;
  /**
   * `onListening` runs each time the LISTEN (re)starts, the first time included: after a lost connection,
   * notifications sent meanwhile were missed, so a listener that keeps state re-reads it.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListening?: () => void): Promise<Unlisten>;
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

/** `transaction`: `databaseUrl` names a pooler in transaction mode (PgBouncer); see openPostgres. */
export type PoolerMode = "transaction" | "none";

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** How `databaseUrl` is pooled; `transaction` needs `directUrl`. */
  pooler?: PoolerMode;
  /** A direct (or session-pooled) URL for LISTEN and migrations; defaults to `databaseUrl`. */
  directUrl?: string;
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
  /** A connection was dropped because its server said it is read-only (failover under way). */
  onReadOnly?(): void;
  /** Something an operator should know that does not stop the service (a setting that could not be applied). */
  onWarning?(message: string): void;
}

/** Where the configured service's database is: DATABASE_URL, DATABASE_POOLER and DATABASE_DIRECT_URL. */
export function databaseOf(
  config: Pick<Config, "databaseUrl" | "databasePooler" | "databaseDirectUrl">,
): Pick<OpenDatabaseOptions, "databaseUrl" | "pooler" | "directUrl"> {
  return { databaseUrl: config.databaseUrl, pooler: config.databasePooler, directUrl: config.databaseDirectUrl };
}

export const defaultConnectTimeoutSeconds = 5;
export const defaultStatementTimeoutMs = 15_000;

export async function openDatabase(options: OpenDatabaseOptions): Promise<DbHandle> {
  if (!options.databaseUrl) return openPglite(options.dataDir ?? "memory://", options.events, options.image);
  const handle = openPostgres(options.databaseUrl, options);
  if (options.pooler === "transaction" && handle.directUrl) {
    const statementTimeoutMs = options.statementTimeoutMs ?? defaultStatementTimeoutMs;
    // The role's defaults are set by the migration step (`vend migrate`); a process only says when they differ.
    await roleTimeouts(handle.directUrl, statementTimeoutMs, "check")
      .then((missing) => {
        if (missing)
          options.events?.onWarning?.(
            `this role's statement_timeout and idle_in_transaction_session_timeout in this database are not ${statementTimeoutMs} ms: run vend migrate with the same settings`,
          );
      })
      .catch(() => {});
  }
  return handle;
}

const idleInTransactionMs = (statementTimeoutMs: number) => Math.max(statementTimeoutMs, 10_000);

/**
 * Behind a transaction pooler a session setting would leak to every client of the server connection, and
 * PgBouncer refuses them as start-up parameters, so the timeouts are the role's defaults in this database
 * (what PgBouncer's documentation recommends), each server connection the pooler opens takes them. `set`
 * (the migration step, connected as the service's role: a role may set its own defaults, no privilege needed)
 * sets them where they differ; `check` only says whether they do. True when they differed.
 */
export async function roleTimeouts(directUrl: string, statementTimeoutMs: number, mode: "set" | "check"): Promise<boolean> {
  const idleMs = idleInTransactionMs(statementTimeoutMs);
  const sql = postgres(directUrl, { max: 1, onnotice: () => {}, fetch_types: false, connection: { application_name: "vend" } });
  try {
    const wanted = [`statement_timeout=${statementTimeoutMs}`, `idle_in_transaction_session_timeout=${idleMs}`];
    const [row] = await sql<{ settings: string[] | null; database: string }[]>`
      select (select setconfig from pg_db_role_setting
               where setrole = (select oid from pg_roles where rolname = current_user)
                 and setdatabase = (select oid from pg_database where datname = current_database())) as settings,
             current_database() as database`;
    const current = row?.settings ?? [];
    if (wanted.every((setting) => current.includes(setting))) return false;
    if (mode === "check") return true;
    const database = `"${String(row?.database).replaceAll('"', '""')}"`;
    await sql.unsafe(`alter role current_user in database ${database} set statement_timeout = ${statementTimeoutMs}`);
    await sql.unsafe(`alter role current_user in database ${database} set idle_in_transaction_session_timeout = ${idleMs}`);
    return true;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Every wait is bounded, so an outage answers 503 instead of hanging: connecting (connect_timeout), a
 * statement (statement_timeout), a transaction left idle by a vanished client (its row locks are freed),
 * a reply that never comes (the watchdog), and reconnecting after errors (postgres.js's default back-off
 * grows to 20 s, which queued queries would wait out after the server is back).
 */
function openPostgres(givenUrl: string, options: OpenDatabaseOptions): DbHandle {
  const url = withFailoverDefaults(givenUrl);
  const pooled = options.pooler === "transaction";
  if (pooled && !options.directUrl) throw new Error("a transaction pooler needs a direct URL for LISTEN and migrations");
  const directUrl = options.directUrl ? withFailoverDefaults(options.directUrl) : url;
  const statementTimeoutMs = options.statementTimeoutMs ?? defaultStatementTimeoutMs;
  const connectTimeoutSeconds = options.connectTimeoutSeconds ?? defaultConnectTimeoutSeconds;
  const targets = plainTargets(url);
  const watchdog = targets
    ? new ReplyWatchdog({
        targets,
        stallMs: 2000,
        probeTimeoutMs: 2000,
        silentLimitMs: statementTimeoutMs + 5000,
        onUnreachable: options.events?.onUnreachable,
        onReadOnly: options.events?.onReadOnly,
      })
    : undefined;
  const max = options.maxConnections ?? 10;
  const poolOptions = {
    max,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
    ...(watchdog ? { socket: watchdog.socket } : {}),
    // Behind a transaction pooler each transaction may land on another server connection: a statement
    // prepared on one is unknown on the next, and session settings would leak to other clients.
    prepare: !pooled,
    connection: pooled
      ? { application_name: "vend" }
      : {
          application_name: "vend",
          statement_timeout: statementTimeoutMs,
          idle_in_transaction_session_timeout: idleInTransactionMs(statementTimeoutMs),
        },
  };
  // postgres.js pipelines a statement onto a connection still busy with another, and without named prepared
  // statements it sends one with parameters in two steps: Parse and Describe ending in Flush, then Bind and
  // Execute ending in Sync. A transaction pooler gives the server connection back at the last ReadyForQuery
  // it expects (PgBouncer counts Syncs; Supavisor does worse): a statement pipelined behind another is half
  // sent to a server connection now another client's, its answer never comes and the query waits for ever
  // (test/process/pooler-pipelining.test.ts). So behind a pooler nothing is pipelined (max_pipeline 0).
  // postgres.js's `begin` then refuses to start (UNSAFE_TRANSACTION), so transactions get a pool of their own
  // that is sent nothing but BEGINs, each reserving its connection until COMMIT: never pipelined either.
  const client = postgres(url, { ...poolOptions, ...(pooled ? { max_pipeline: 0 } : {}) });
  const transactions = pooled ? postgres(url, poolOptions) : client;
  // LISTEN needs a session of its own: behind a transaction pooler, on the direct URL.
  const listener = pooled
    ? postgres(directUrl, {
        max: 1,
        onnotice: () => {},
        connect_timeout: connectTimeoutSeconds,
        connection: { application_name: "vend-listen" },
      })
    : client;
  const db: Database = drizzlePostgres(client, { schema });
  bindPool(db, client, { prepare: !pooled, transactions });
  const watches = new Set<Omit<ChannelWatch, "synchronous">>();
  return {
    db,
    kind: "postgres",
    url,
    directUrl,
    // Bounded both ways: during an outage postgres.js would wait for its LISTEN connection indefinitely.
    async listen(channel, onPayload, onListening) {
      const subscription = await withinMs(listener.listen(channel, onPayload, onListening), connectTimeoutSeconds * 1000);
      return () => withinMs(subscription.unlisten(), 2000).catch(() => {});
    },
    async notify(channel, payload) {
      await client.notify(channel, payload);
    },
    watch(channel, onPayload) {
      const watch = watchOnOwnConnection(directUrl, connectTimeoutSeconds, channel, onPayload);
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
      const timeout = watchdog?.serverUnreachable ? 0 : 5;
      await Promise.all([...new Set([client, transactions, listener])].map((pool) => pool.end({ timeout })));
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
    connection: { application_name: watchingSessionName },
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
 * Where the pool connects, when the watchdog can read its sockets: the hosts (or Unix socket) without
 * TLS. Under TLS the bytes it would watch are wrapped by the TLS layer, so the driver's own socket is
 * used and only connect_timeout, statement_timeout and TCP keepalive bound an outage.
 */
function plainTargets(url: string): Target[] | undefined {
  const { targets, params } = parsePostgresUrl(url);
  return asksForTls(params) ? undefined : targets;
}

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: "ETIMEDOUT" })), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/**
 * Opens the engine; a new directory on disk (`first`, no image given) starts from the image `npm install`
 * prepared when there is one (src/db/embedded-image.ts). An image that cannot be used is said so, cleared away,
 * and initdb runs instead.
 */
async function openEngine(dataDir: string, first: boolean, events: EmbeddedEngineEvents, image?: Blob): Promise<EmbeddedEngine> {
  const prepared = first && !image ? await readEmbeddedImage() : undefined;
  if (!prepared) return EmbeddedEngine.open(dataDir, events, image);
  events.onProgress?.(`Creating the database files from the image prepared at install (${prepared.path})`);
  try {
    const engine = await EmbeddedEngine.open(dataDir, events, prepared.image);
    events.onProgress?.("Database files created");
    return engine;
  } catch (error) {
    events.onProgress?.(
      `The prepared image could not be used (${(error as Error).message}); creating the database files instead`,
    );
    clearDataDir(dataDir, (name) => name.startsWith(dataDirLockName));
    return EmbeddedEngine.open(dataDir, events);
  }
}

async function openPglite(dataDir: string, events: EmbeddedEngineEvents = {}, image?: Blob): Promise<DbHandle> {
  const inMemory = dataDir.startsWith("memory://");
  let lock: DataDirLock | undefined;
  let first = false;
  if (!inMemory) {
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      // Before PGlite touches the directory: a second process must not even open it.
      lock = lockDataDir(dataDir);
      makePrivate(dataDir);
    } catch (error) {
      throw asDataDirError(dataDir, error);
    }
    first = !existsSync(join(dataDir, "PG_VERSION"));
    events.onProgress?.(`Opening the embedded database in ${resolve(dataDir)}${first ? " (first start: creating it)" : ""}`);
  }
  let engine: EmbeddedEngine;
  try {
    engine = await openEngine(dataDir, first, events, image);
    if (!inMemory) makePrivate(dataDir);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzlePglite(engine as unknown as PGlite, { schema }) as unknown as Database;
  return {
    db,
    kind: "pglite",
    listen: (channel, onPayload, onListening) => engine.listen(channel, onPayload, onListening),
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
        if (!inMemory) makePrivate(dataDir);
      } finally {
        lock?.release();
      }
    },
  };
}
