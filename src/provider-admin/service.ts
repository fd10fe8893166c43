import { and, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Config } from "../config.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { queryRows } from "../db/rows.ts";
import { providerAnomalies } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import { writeSwitch } from "../providers/health.ts";
import type { Providers } from "../providers/registry.ts";

type Schemas = components["schemas"];
type AnomalyRow = typeof providerAnomalies.$inferSelect;

export interface ProviderAdminDeps {
  db: Executor;
  providers: Providers;
  config: Config;
}

/** The provider of this name, or 404 naming those there are. */
function known(providers: Providers, name: string) {
  const entry = providers.list().find((p) => p.name === name);
  if (!entry) {
    const names = providers.list().map((p) => p.name);
    throw new AppError("NOT_FOUND", `Unknown provider ${name}; the providers are ${names.join(", ")}`);
  }
  return entry;
}

function lowBalance(config: Config, name: string, balanceKobo: number | null): boolean {
  const threshold = config.routing.lowBalanceKobo[name];
  return threshold !== undefined && balanceKobo !== null && balanceKobo < threshold;
}

/** A provider's status as this process sees it; with `state`, as that switch (just written) makes it. */
function presentStatus(
  deps: ProviderAdminDeps,
  name: string,
  state = deps.providers.health.switchOf(name),
): Schemas["ProviderStatus"] {
  const { health } = deps.providers;
  const entry = known(deps.providers, name);
  const breakers = health.breakersOf(name).map((b) => ({
    service: b.service as Schemas["ProviderBreaker"]["service"],
    state: b.state,
    consecutive_failures: b.consecutiveFailures,
    open_until: b.openUntil?.toISOString() ?? null,
  }));
  return {
    name,
    mode: entry.mode,
    enabled: state.enabled,
    disabled_reason: state.disabledReason,
    disabled_at: state.disabledAt?.toISOString() ?? null,
    available: state.enabled && breakers[0]?.state !== "open",
    breakers,
    balance_kobo: state.balanceKobo,
    balance_checked_at: state.balanceCheckedAt?.toISOString() ?? null,
    low_balance_kobo: deps.config.routing.lowBalanceKobo[name] ?? null,
    low_balance: lowBalance(deps.config, name, state.balanceKobo),
  };
}

/** Every provider as this process sees it after re-reading the shared state, and the effective routes. */
export async function providerOverview(deps: ProviderAdminDeps): Promise<Schemas["ProviderOverview"]> {
  await deps.providers.health.refresh();
  return {
    providers: deps.providers.list().map((p) => presentStatus(deps, p.name)),
    routes: deps.providers.effectiveRoutes(),
    product_codes: deps.config.routing.productCodes,
    providers_file: deps.config.routing.file ?? null,
  };
}

/**
 * An operator's switch, written on `deps.db` (the caller's transaction): this process applies it with
 * `deps.providers.health.refresh()` once it has committed, every other process on its next refresh.
 * Answers the provider's status before and after.
 */
export async function switchProvider(
  deps: ProviderAdminDeps,
  name: string,
  enabled: boolean,
  reason: string | null,
): Promise<{ before: Schemas["ProviderStatus"]; after: Schemas["ProviderStatus"] }> {
  known(deps.providers, name);
  const before = presentStatus(deps, name);
  const written = await writeSwitch(deps.db, name, enabled, reason);
  return { before, after: presentStatus(deps, name, written) };
}

const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);
const wholeMs = (value: number | string | null) => (value === null ? null : Math.round(Number(value)));

/** A provider's figures over the last 5 and 60 minutes, from its attempts. */
export async function providerStats(deps: ProviderAdminDeps, name: string): Promise<Schemas["ProviderStats"]> {
  known(deps.providers, name);
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
    sql`select count(*)::int as count from transactions
        where provider = ${name} and status in ('processing', 'pending') and next_attempt_at is not null`,
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

const presentAnomaly = (row: AnomalyRow): Schemas["Anomaly"] => ({
  id: row.id,
  kind: row.kind,
  provider: row.provider,
  reference: row.reference,
  message: row.message,
  created_at: row.createdAt.toISOString(),
});

export function listAnomalies(
  db: Executor,
  cursors: CursorCodec,
  query: { kind?: AnomalyRow["kind"]; provider?: string; cursor?: string; limit?: number },
): Promise<Page<Schemas["Anomaly"]>> {
  const filters = { kind: query.kind, provider: query.provider };
  const conditions = [
    query.kind ? eq(providerAnomalies.kind, query.kind) : undefined,
    query.provider ? eq(providerAnomalies.provider, query.provider) : undefined,
  ];
  const request = { cursors, scope: "anomalies", filters, query, conditions: [and(...conditions)] };
  return readNewestFirst(db, providerAnomalies, "createdAt", request, (rows) => rows.map(presentAnomaly));
}
