import { sql } from "drizzle-orm";
import { AppError } from "../errors.ts";
import type { Database, DbHandle } from "./client.ts";
import { queryRows } from "./rows.ts";
import { isDatabaseUnavailable } from "./unavailable.ts";

export type ReadTarget = "primary" | "replica";

/** Where reads that may be a little stale (operator reads, the catalogue) are served. */
export interface ReadRouter {
  /**
   * Runs `read` on the replica while its last lag sample is fresh and under the bound, else on the primary.
   * A replica that fails (unavailable, timed out, a recovery conflict) or has not got a row yet (404) never
   * fails the read: it runs again on the primary.
   */
  read<T>(read: (db: Database) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ReadRouterEvents {
  /** Each sample: the replica's lag in ms, or undefined when it could not be measured. */
  onLag?(lagMs: number | undefined): void;
  /** Each read, by where it was answered (a read retried on the primary counts there). */
  onRead?(target: ReadTarget): void;
  /** A replica read failed and was retried on the primary; the replica is unused until a sample succeeds. */
  onReplicaFailure?(error: unknown): void;
}

/** Without a replica: every read on the primary (whatever `primary()` is at the time: tests swap it). */
export function primaryReads(primary: () => Database, events: ReadRouterEvents = {}): ReadRouter {
  return {
    read(read) {
      events.onRead?.("primary");
      return read(primary());
    },
    close: async () => {},
  };
}

export interface ReplicaRouterOptions {
  primary: () => Database;
  replica: DbHandle;
  maxLagMs: number;
  sampleEveryMs?: number;
  /** How long one sample may take before the replica counts as unusable. */
  sampleTimeoutMs?: number;
  /** How the lag is measured (tests replace it); by default `measureReplicaLag`. */
  measureLag?: () => Promise<number>;
  events?: ReadRouterEvents;
}

/** Starts sampling the replica's lag at once; `close` stops sampling and closes the replica's pool. */
export function startReplicaRouter(options: ReplicaRouterOptions): ReadRouter {
  const { primary, replica, maxLagMs, events = {} } = options;
  const sampleEveryMs = options.sampleEveryMs ?? 250;
  const sampleTimeoutMs = options.sampleTimeoutMs ?? 1000;
  const history = new PrimaryPositions();
  const measure = options.measureLag ?? (() => measureReplicaLag(primary(), replica.db, history));
  let sample: { lagMs: number; at: number } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const takeSample = async () => {
    try {
      const lagMs = await withinMs(measure(), sampleTimeoutMs);
      sample = { lagMs, at: performance.now() };
      events.onLag?.(lagMs);
    } catch {
      sample = undefined;
      events.onLag?.(undefined);
    }
    if (!closed) timer = setTimeout(takeSample, sampleEveryMs);
  };
  void takeSample();

  // The data read can be as old as the lag measured plus the time since it was measured.
  const replicaCurrent = () => sample !== undefined && sample.lagMs + (performance.now() - sample.at) <= maxLagMs;

  return {
    async read(read) {
      if (!replicaCurrent()) {
        events.onRead?.("primary");
        return read(primary());
      }
      try {
        const result = await read(replica.db);
        events.onRead?.("replica");
        return result;
      } catch (error) {
        if (replicaFailed(error)) {
          sample = undefined;
          events.onReplicaFailure?.(error);
        } else if (!(error instanceof AppError && error.code === "NOT_FOUND")) {
          throw error;
        }
        events.onRead?.("primary");
        return read(primary());
      }
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await replica.close();
    },
  };
}

/**
 * The replica's staleness bound in ms: the age of the oldest commit it may not have replayed yet, the
 * smaller of two upper bounds that are both right when the primary is idle or the replica disconnected:
 *
 * - by position: the primary's WAL insert position is sampled (before the replica is asked) with the
 *   time; once the replica has replayed past a sampled position, every commit before that time is on it;
 *   an idle primary stays at the position the replica has reached, so the lag is the sample's age (~0);
 * - by time: `now() - pg_last_xact_replay_timestamp()`, accurate under load (each commit carries its time),
 *   but growing for ever while the primary is idle, and stale when the replica stops receiving.
 *
 * A server that is not in recovery (a promoted replica, or the primary itself) has no lag. Without an
 * answer from the primary, the position bound is the usual `0 when all received WAL is replayed`.
 */
export async function measureReplicaLag(primary: Database, replica: Database, history: PrimaryPositions): Promise<number> {
  const position = await primaryPosition(primary);
  if (position !== undefined) history.add(position);
  const [row] = await queryRows<{
    standby: boolean;
    replayed: string | null;
    received: string | null;
    since_replay_ms: number | null;
  }>(
    replica,
    sql`select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replayed,
               pg_last_wal_receive_lsn()::text as received,
               (extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 as since_replay_ms`,
  );
  if (!row) throw new Error("the replica answered no row");
  if (!row.standby) return 0;
  if (row.replayed === null) throw new Error("the replica has replayed nothing yet");
  const replayed = parseLsn(row.replayed);
  const byTime = row.since_replay_ms === null ? Number.POSITIVE_INFINITY : Math.max(0, Number(row.since_replay_ms));
  const byPosition =
    position !== undefined
      ? history.ageOfNewestAtOrBelow(replayed)
      : row.received !== null && parseLsn(row.received) === replayed
        ? 0
        : Number.POSITIVE_INFINITY;
  return Math.min(byTime, byPosition);
}

async function primaryPosition(primary: Database): Promise<{ lsn: bigint; at: number } | undefined> {
  try {
    const [row] = await queryRows<{ lsn: string }>(primary, sql`select pg_current_wal_insert_lsn()::text as lsn`);
    return row ? { lsn: parseLsn(row.lsn), at: performance.now() } : undefined;
  } catch {
    return undefined;
  }
}

/** The primary's recent WAL positions with when they were read, oldest first. */
export class PrimaryPositions {
  private readonly positions: { lsn: bigint; at: number }[] = [];

  add(position: { lsn: bigint; at: number }): void {
    this.positions.push(position);
    if (this.positions.length > 64) this.positions.shift();
  }

  /** ms since the newest sampled position the replica has replayed up to; infinite when none is. */
  ageOfNewestAtOrBelow(replayed: bigint): number {
    for (let i = this.positions.length - 1; i >= 0; i--) {
      const position = this.positions[i];
      if (position && position.lsn <= replayed) return performance.now() - position.at;
    }
    return Number.POSITIVE_INFINITY;
  }
}

/** `16/B374D848` → a comparable number. */
export function parseLsn(text: string): bigint {
  const [high = "0", low = "0"] = text.split("/");
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** Unavailable or timed out (src/db/unavailable.ts), or a query cancelled by a conflict with recovery (40001, 40P01). */
function replicaFailed(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  for (let current: unknown = error, depth = 0; current && typeof current === "object" && depth < 10; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === "40001" || code === "40P01") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: "ETIMEDOUT" })), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
