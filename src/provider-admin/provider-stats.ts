import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import { knownProvider, lowBalance, type ProviderAdminDeps } from "./provider-status.ts";

type Schemas = components["schemas"];

const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);
const wholeMs = (value: number | string | null) => (value === null ? null : Math.round(Number(value)));

/** A provider's figures over the last 5 and 60 minutes, from its attempts. */
export async function providerStats(deps: ProviderAdminDeps, name: string): Promise<Schemas["ProviderStats"]> {
  knownProvider(deps.providers, name);
  await deps.providers.health.refresh();
  const windows = await queryRows<{
    minutes: number;
    sent: number;
    successful: number;
    failed: number;
    not_received: number;
    open: number;
    p50: number | string | null;
    p95: number | string | null;
  }>(
    deps.db,
    sql`select w.minutes, count(a.id)::int as sent,
               count(a.id) filter (where a.status = 'successful')::int as successful,
               count(a.id) filter (where a.status = 'failed')::int as failed,
               count(a.id) filter (where a.status = 'not_received')::int as not_received,
               count(a.id) filter (where a.status in ('sent', 'pending', 'unknown'))::int as open,
               percentile_cont(0.5) within group (order by a.answer_ms) as p50,
               percentile_cont(0.95) within group (order by a.answer_ms) as p95
        from (values (5), (60)) as w(minutes)
        left join provider_attempts a on a.provider = ${name} and a.sent_at > now() - make_interval(mins => w.minutes)
        group by w.minutes order by w.minutes`,
  );
  const [pending] = await queryRows<{ count: number }>(
    deps.db,
    sql`select count(*)::int as count from transaction_queue q
        join transactions t on t.id = q.transaction_id and t.created_at = q.created_at
        where t.provider = ${name} and t.status in ('processing', 'pending')`,
  );
  const state = deps.providers.health.switchOf(name);
  return {
    provider: name,
    pending: Number(pending?.count ?? 0),
    windows: windows.map((w) => {
      const answered = w.successful + w.failed + w.not_received;
      return {
        minutes: Number(w.minutes) as 5 | 60,
        sent: w.sent,
        successful: w.successful,
        failed: w.failed,
        not_received: w.not_received,
        open: w.open,
        success_rate: rate(w.successful, answered),
        failure_rate: rate(w.failed + w.not_received, answered),
        p50_ms: wholeMs(w.p50),
        p95_ms: wholeMs(w.p95),
      };
    }),
    balance_kobo: state.balanceKobo,
    balance_checked_at: state.balanceCheckedAt?.toISOString() ?? null,
    low_balance: lowBalance(deps.config, name, state.balanceKobo),
    generated_at: new Date().toISOString(),
  };
}
