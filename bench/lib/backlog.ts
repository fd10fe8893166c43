import type postgres from "postgres";

export interface Backlog {
  /** Vends not yet claimed. */
  queued: number;
  /** Vends not final: queued, processing, pending. */
  open: number;
}

const queueTables = new WeakMap<postgres.Sql, Promise<boolean>>();

/**
 * The service's open vends, read through its work queue (`transaction_queue`, since issue 27) so the bench's own
 * polling never scans the growing `transactions` table; on a service older than the queue, through the
 * transactions' partial work index it had then (so one bench compares both).
 */
export async function backlog(sql: postgres.Sql): Promise<Backlog> {
  let hasQueue = queueTables.get(sql);
  if (!hasQueue) {
    hasQueue = sql<{ found: boolean }[]>`select to_regclass('transaction_queue') is not null as found`.then((r) =>
      Boolean(r[0]?.found),
    );
    queueTables.set(sql, hasQueue);
  }
  const [row] = (await hasQueue)
    ? await sql`select count(*) filter (where t.status = 'queued') as queued, count(*) as open
        from transaction_queue q join transactions t on t.id = q.transaction_id and t.created_at = q.created_at
        where t.status in ('queued', 'processing', 'pending')`
    : await sql`select count(*) filter (where status = 'queued') as queued, count(*) as open
        from transactions where status in ('queued', 'processing', 'pending')`;
  return { queued: Number(row?.queued ?? -1), open: Number(row?.open ?? -1) };
}
