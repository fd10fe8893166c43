import { sql } from "drizzle-orm";
import type { Executor } from "../db/executor.ts";
import { queryRows } from "../db/rows.ts";

export interface QueueFigures {
  /** Transactions due for work now and not leased: queued, pending with their re-query due, or whose lease ran out. */
  due: number;
  /** Seconds the longest-due of them has been due; 0 with none. */
  oldestDueAgeSeconds: number;
  /** Pending transactions accepted more than `stuckAfterMinutes` ago. */
  stuck: number;
}

interface FiguresRow {
  due: number | string;
  oldest_due_age_seconds: number | string | null;
  stuck: number | string;
}

/**
 * The queue's figures in one statement over the work queue (and the pending transactions' partial index). Rejects when
 * the database has not answered within `timeoutMs`, so a scrape never waits on an outage.
 */
export async function readQueueFigures(
  db: Executor,
  options: { stuckAfterMinutes: number; timeoutMs: number },
): Promise<QueueFigures> {
  const query = queryRows<FiguresRow>(
    db,
    sql`select count(*)::int as due, extract(epoch from now() - min(due_at))::float8 as oldest_due_age_seconds,
               (select count(*) from transactions where completed_at is null and status = 'pending'
                  and created_at < now() - make_interval(mins => ${options.stuckAfterMinutes}::int))::int as stuck
        from transaction_queue where due_at <= now()`,
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`queue figures: no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  // A late answer or failure after the deadline is dropped, not left unhandled.
  query.catch(() => {});
  const [row] = await Promise.race([query, expired]).finally(() => clearTimeout(timer));
  return {
    due: Number(row?.due ?? 0),
    oldestDueAgeSeconds: Math.max(0, Number(row?.oldest_due_age_seconds ?? 0)),
    stuck: Number(row?.stuck ?? 0),
  };
}
