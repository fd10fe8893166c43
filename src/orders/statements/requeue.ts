import { type SQL, sql } from "drizzle-orm";
import type { Cte } from "../../db/cte.ts";

/**
 * `requeued as (…), unqueued as (…)`: the queue rows (`transaction_queue`) of the orders a statement just moved
 * (`moved`: each order's `id`, `created_at` and the `next_attempt_at` it now has). An order with a next attempt
 * is due then (its row made if it had none, as when an operator revives one whose re-queries had stopped); one
 * without (its re-queries stopped) leaves the queue. Written in the same statement as the move, so the queue
 * never misses an order a worker must claim.
 */
export function requeue(moved: Cte<"id" | "created_at" | "next_attempt_at">): SQL {
  const { id, created_at, next_attempt_at } = moved.column;
  return sql`requeued as (
      insert into transaction_queue (transaction_id, created_at, due_at)
      select ${id}, ${created_at}, ${next_attempt_at} from ${moved.name} where ${next_attempt_at} is not null
      on conflict (transaction_id) do update set due_at = excluded.due_at
    ), unqueued as (
      delete from transaction_queue q using ${moved.name}
      where q.transaction_id = ${id} and ${next_attempt_at} is null
    )`;
}
