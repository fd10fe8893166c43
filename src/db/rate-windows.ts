import { sql } from "drizzle-orm";
import type { Executor } from "./executor.ts";
import { queryRows } from "./rows.ts";

/**
 * Claims `amount` requests of `subject`'s budget in the window starting at `windowStart`, for every
 * process on the database at once: one statement, the row lock serialising concurrent claims. Answers
 * how many were granted: all of them while the window has room, the rest of the budget when the claim
 * crosses the limit, 0 once it is spent.
 *
 * `used` counts what was claimed, and a claim that crosses the limit is added whole (so the grant can be
 * read back from the new total without the old one): it may end above `limit` by less than one claim.
 */
export async function claimRateBudget(
  db: Executor,
  claim: { subject: string; windowStart: Date; amount: number; limit: number },
): Promise<{ granted: number; used: number }> {
  const [row] = await queryRows<{ used: number }>(
    db,
    sql`insert into rate_limit_windows as w (subject, window_start, used)
      values (${claim.subject}, ${claim.windowStart.toISOString()}::timestamptz, ${claim.amount})
      on conflict (subject, window_start) do update set used = w.used + excluded.used where w.used < ${claim.limit}
      returning used`,
  );
  if (!row) return { granted: 0, used: claim.limit };
  const used = Number(row.used);
  return { granted: Math.max(0, claim.amount - Math.max(0, used - claim.limit)), used: Math.min(used, claim.limit) };
}

/** Deletes the windows that started before `before`; answers how many. */
export async function deleteRateWindowsBefore(db: Executor, before: Date): Promise<number> {
  const rows = await queryRows<{ subject: string }>(
    db,
    sql`delete from rate_limit_windows where window_start < ${before.toISOString()}::timestamptz returning subject`,
  );
  return rows.length;
}
