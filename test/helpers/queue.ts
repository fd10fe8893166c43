import { sql } from "drizzle-orm";
import type { Executor } from "../../src/db/transaction.ts";

/**
 * Rebuilds the work queue (`transaction_queue`) from the transactions as they stand, for a test that moved
 * an order's times by hand (a lease run out, a re-query due now, an acceptance in the past): the service's
 * own statements keep the queue in step as they move an order; a hand-written update does not. The rule is
 * migration 0014's: queued ones due at their next attempt, claimed or pending ones when their lease also runs
 * out, none without a next attempt.
 */
export async function resyncQueue(db: Executor): Promise<void> {
  await db.execute(sql`with fresh as (
      select id, created_at,
             case when status = 'queued' or lease_expires_at is null then next_attempt_at
                  else greatest(next_attempt_at, lease_expires_at) end as due_at
      from transactions
      where status in ('queued', 'processing', 'pending') and next_attempt_at is not null
    ), cleared as (
      delete from transaction_queue q where not exists (select 1 from fresh f where f.id = q.transaction_id)
    )
    insert into transaction_queue (transaction_id, created_at, due_at) select id, created_at, due_at from fresh
    on conflict (transaction_id) do update set created_at = excluded.created_at, due_at = excluded.due_at`);
}

/** Runs a hand-written change to transactions, then brings the queue in step with it (`resyncQueue`). */
export async function changeTransactions(db: Executor, change: ReturnType<typeof sql>): Promise<void> {
  await db.execute(change);
  await resyncQueue(db);
}
