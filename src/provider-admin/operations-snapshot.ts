import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import { validationError } from "../errors.ts";
import { readQueueFigures } from "../metrics/queue-figures.ts";
import type { ProviderAdminDeps } from "./provider-status.ts";

type Snapshot = components["schemas"]["OperationsSnapshot"];

/** Without `since`, accepts and completions are counted over this last stretch. */
const defaultWindowMs = 60_000;
const maxWindowMs = 3_600_000;

const count = (value: number | string | null | undefined) => Number(value ?? 0);
const seconds = (value: number | string | null | undefined) => Math.max(0, Math.round(Number(value ?? 0) * 1000) / 1000);

/** The database's clock to the millisecond, so that successive snapshots split time without overlap. */
async function databaseNowMs(deps: ProviderAdminDeps): Promise<number> {
  const [row] = await queryRows<{ now_ms: number | string }>(
    deps.db,
    sql`select (extract(epoch from date_trunc('milliseconds', now())) * 1000)::float8 as now_ms`,
  );
  return Number(row?.now_ms);
}

/** The interval's start: `since` when it is within the last hour (400 otherwise), else the last minute. */
function intervalStart(since: string | undefined, nowMs: number): number {
  if (since === undefined) return nowMs - defaultWindowMs;
  const sinceMs = Date.parse(since);
  if (sinceMs > nowMs) throw validationError([{ field: "since", message: "is in the future (by the database's clock)" }]);
  if (nowMs - sinceMs > maxWindowMs) throw validationError([{ field: "since", message: "must be at most one hour back" }]);
  return sinceMs;
}

/**
 * Figures for a live view, the same from every process: per provider the vends accepted and completed in
 * (since, now], its success rate and p95 answer time over the last 5 minutes (as its stats count them) and its
 * open orders; the work queue, pending and stuck orders, and the webhook backlog.
 */
export async function operationsSnapshot(deps: ProviderAdminDeps, since: string | undefined): Promise<Snapshot> {
  const nowMs = await databaseNowMs(deps);
  const sinceMs = intervalStart(since, nowMs);
  const from = new Date(sinceMs).toISOString();
  const to = new Date(nowMs).toISOString();
  const [accepted, completed, attempts, open, queue, pending, webhooks] = await Promise.all([
    queryRows<{ provider: string; accepted: number }>(
      deps.db,
      sql`select provider, count(*)::int as accepted from transactions
          where created_at > ${from}::timestamptz and created_at <= ${to}::timestamptz group by provider`,
    ),
    queryRows<{ provider: string; successful: number; failed: number }>(
      deps.db,
      sql`select provider, count(*) filter (where status = 'successful')::int as successful,
                 count(*) filter (where status = 'failed')::int as failed
          from transactions where completed_at > ${from}::timestamptz and completed_at <= ${to}::timestamptz
          group by provider`,
    ),
    queryRows<{ provider: string; successful: number; answered: number; p95: number | string | null }>(
      deps.db,
      sql`select provider, count(*) filter (where status = 'successful')::int as successful,
                 count(*) filter (where status in ('successful', 'failed', 'not_received'))::int as answered,
                 percentile_cont(0.95) within group (order by answer_ms) as p95
          from provider_attempts where sent_at > now() - interval '5 minutes' group by provider`,
    ),
    queryRows<{ provider: string; pending: number }>(
      deps.db,
      sql`select t.provider, count(*)::int as pending from transaction_queue q
          join transactions t on t.id = q.transaction_id and t.created_at = q.created_at
          where t.status in ('processing', 'pending') group by t.provider`,
    ),
    readQueueFigures(deps.db, { stuckAfterMinutes: deps.config.operations.stuckAfterMinutes, timeoutMs: 5000 }),
    queryRows<{ pending: number }>(
      deps.db,
      sql`select count(*)::int as pending from transactions where completed_at is null and status = 'pending'`,
    ),
    queryRows<{ backlog: number; oldest: number | string | null }>(
      deps.db,
      sql`select count(*)::int as backlog,
                 extract(epoch from now() - min(next_attempt_at) filter (where next_attempt_at <= now()))::float8 as oldest
          from webhook_deliveries where status = 'pending'`,
    ),
  ]);
  const byProvider = <R extends { provider: string }>(rows: R[]) => new Map(rows.map((row) => [row.provider, row]));
  const acceptedBy = byProvider(accepted);
  const completedBy = byProvider(completed);
  const attemptsBy = byProvider(attempts);
  const openBy = byProvider(open);
  return {
    generated_at: to,
    since: from,
    interval_seconds: (nowMs - sinceMs) / 1000,
    providers: deps.providers.list().map(({ name, mode }) => {
      const tried = attemptsBy.get(name);
      const answered = count(tried?.answered);
      return {
        provider: name,
        mode,
        accepted: count(acceptedBy.get(name)?.accepted),
        successful: count(completedBy.get(name)?.successful),
        failed: count(completedBy.get(name)?.failed),
        success_rate_5m: answered === 0 ? null : Math.round((count(tried?.successful) / answered) * 10_000) / 10_000,
        p95_ms_5m: tried?.p95 === null || tried?.p95 === undefined ? null : Math.round(Number(tried.p95)),
        pending: count(openBy.get(name)?.pending),
      };
    }),
    queue: {
      due: queue.due,
      oldest_due_age_seconds: seconds(queue.oldestDueAgeSeconds),
      pending: count(pending[0]?.pending),
      stuck: queue.stuck,
    },
    webhooks: { backlog: count(webhooks[0]?.backlog), oldest_due_age_seconds: seconds(webhooks[0]?.oldest) },
  };
}
