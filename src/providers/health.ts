import { sql } from "drizzle-orm";
import type { RoutingConfig } from "../config.ts";
import type { DbHandle, Unlisten } from "../db/client.ts";
import { jsonRows, queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import type { Logger } from "../logger.ts";

export type BreakerState = "closed" | "open" | "half_open";

/** `service` '' is the provider-wide breaker. Only live providers' calls are counted (the worker decides). */
interface Breaker {
  failures: number;
  /** Epoch ms until which it is open; null when closed. Past: half-open. */
  openUntil: number | null;
  /** When the half-open probe was let through (epoch ms); null when none is out. */
  probeAt: number | null;
  /** The database clock of the last shared row adopted or written (epoch ms), so an older row is not adopted again. */
  syncedAt: number;
  /** Writes of this process's own change still under way: until they land, the shared row is older than it. */
  writing: number;
}

export interface BreakerView {
  service: string | null;
  state: BreakerState;
  consecutiveFailures: number;
  openUntil: Date | null;
}

export interface ProviderSwitch {
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: Date | null;
  balanceKobo: number | null;
  balanceCheckedAt: Date | null;
}

const defaultSwitch: ProviderSwitch = {
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  balanceKobo: null,
  balanceCheckedAt: null,
};

/** A `provider_states` row as read. */
interface SwitchRow {
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | string | null;
  balance_kobo: number | string | null;
  balance_checked_at: Date | string | null;
}

type StateRow = SwitchRow & { provider: string };

interface BreakerRow {
  provider: string;
  service: string;
  consecutive_failures: number;
  open_until: Date | string | null;
  updated_at: Date | string;
}

const switchOfRow = (row: SwitchRow): ProviderSwitch => ({
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  disabledAt: toDate(row.disabled_at),
  balanceKobo: row.balance_kobo === null ? null : Number(row.balance_kobo),
  balanceCheckedAt: toDate(row.balance_checked_at),
});

const keyOf = (provider: string, service: string) => `${provider}\u0000${service}`;

/**
 * Every write of a switch, a float or a shared breaker notifies this channel (at its commit), so each process
 * re-reads them at once; the poll every `healthRefreshMs` only covers a notification lost with a connection.
 */
export const providerHealthChannel = "vend_provider_health";

/** A FROM item that sends the notification: `… from written, ${announce}`. */
const announce = sql`(select pg_notify(${providerHealthChannel}, '')) announced`;

/**
 * The health of every provider as this process sees it: operators' switches (persisted in
 * `provider_states`, re-read when a write announces a change, and every `healthRefreshMs` in case a
 * notification was lost) and a circuit breaker per provider and per
 * provider+service. A breaker opens after `breaker.failures` consecutive failures and stays open for
 * the cool-down; then it is half-open and lets ONE order through as a probe, whose outcome closes or
 * re-opens it. A breaker this process opens or closes is written to `provider_breakers`, and each
 * refresh adopts what other processes wrote since, so every process routes around a failing provider.
 * An idle process reads nothing but the poll (30 s by default): the notifications wake it.
 */
export class ProviderHealth {
  private readonly breakers = new Map<string, Breaker>();
  private switches = new Map<string, ProviderSwitch>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private unlisten: Unlisten | undefined;
  /** The refresh under way, and whether another was asked for meanwhile (a change may have missed it). */
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** Breaker changes being written for the other processes. */
  private readonly sharing = new Set<Promise<void>>();

  constructor(
    private readonly db: Executor,
    private readonly rules: Pick<RoutingConfig, "breaker" | "healthRefreshMs">,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Re-reads the switches and shared breakers whenever a write announces a change on `database` (and when its
   * LISTEN restarts after a lost connection), and every `healthRefreshMs`, until stopped.
   */
  async start(database?: Pick<DbHandle, "listen">): Promise<void> {
    this.timer ??= setInterval(() => this.refreshSoon(), this.rules.healthRefreshMs);
    if (database && !this.unlisten) {
      this.unlisten = await database.listen(
        providerHealthChannel,
        () => this.refreshSoon(),
        () => this.refreshSoon(),
      );
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.();
  }

  /** A refresh now, or once the one under way ends (it may have read before the change): never two at once. */
  private refreshSoon(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = this.refresh()
      .catch((error) =>
        this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "provider health refresh failed"),
      )
      .finally(() => {
        this.refreshing = undefined;
        if (!this.refreshAgain) return;
        this.refreshAgain = false;
        this.refreshSoon();
      });
  }

  async refresh(): Promise<void> {
    // One round trip.
    const [answer] = await queryRows<{ states: string | StateRow[]; breakers: string | BreakerRow[] }>(
      this.db,
      sql`select (select coalesce(json_agg(s), '[]') from (select provider, enabled, disabled_reason, disabled_at, balance_kobo,
                                                              balance_checked_at from provider_states) s) as states,
                 (select coalesce(json_agg(b), '[]') from (select provider, service, consecutive_failures, open_until, updated_at
                                                           from provider_breakers) b) as breakers`,
    );
    const states = jsonRows(answer?.states);
    const shared = jsonRows(answer?.breakers);
    this.switches = new Map(states.map((s) => [s.provider, switchOfRow(s)]));
    for (const row of shared) {
      const updatedAt = toDate(row.updated_at)?.getTime() ?? 0;
      const breaker = this.breaker(row.provider, row.service);
      if (updatedAt <= breaker.syncedAt || breaker.writing > 0) continue;
      breaker.failures = Number(row.consecutive_failures);
      breaker.openUntil = toDate(row.open_until)?.getTime() ?? null;
      breaker.probeAt = null;
      breaker.syncedAt = updatedAt;
    }
  }

  /** The operators' switch and last float of a provider (enabled by default). */
  switchOf(provider: string): ProviderSwitch {
    return this.switches.get(provider) ?? defaultSwitch;
  }

  /** Records an operator's switch and applies it here at once; other processes follow on their next refresh. */
  async setEnabled(provider: string, enabled: boolean, reason: string | null): Promise<ProviderSwitch> {
    await writeSwitch(this.db, provider, enabled, reason);
    await this.refresh();
    return this.switchOf(provider);
  }

  /** Records the float a provider reported; returns the one recorded before (null when none). */
  async recordBalance(provider: string, balanceKobo: number): Promise<number | null> {
    const [row] = await queryRows<{ previous: number | string | null }>(
      this.db,
      sql`with before as (select balance_kobo from provider_states where provider = ${provider}),
          written as (
            insert into provider_states (provider, balance_kobo, balance_checked_at) values (${provider}, ${balanceKobo}, now())
            on conflict (provider) do update set balance_kobo = excluded.balance_kobo, balance_checked_at = excluded.balance_checked_at
            returning (select balance_kobo from before) as previous
          )
          select written.previous from written, ${announce}`,
    );
    const current = this.switchOf(provider);
    this.switches.set(provider, { ...current, balanceKobo, balanceCheckedAt: new Date(this.now()) });
    return row?.previous === null || row?.previous === undefined ? null : Number(row.previous);
  }

  /**
   * May a new order go to `provider` for `service` now: enabled, and neither its provider-wide nor its
   * service breaker open. A half-open breaker lets one probe through when `probe` is set (the worker,
   * about to send), and counts as usable without it (accept time, which sends nothing).
   */
  usable(provider: string, service: string, probe: boolean): boolean {
    if (!this.switchOf(provider).enabled) return false;
    const breakers = [this.breaker(provider, ""), this.breaker(provider, service)];
    const states = breakers.map((b) => this.stateOf(b));
    if (states.includes("open")) return false;
    if (!probe) return true;
    const halfOpen = breakers.filter((_, i) => states[i] === "half_open");
    const cooldown = this.rules.breaker.cooldownMs;
    if (halfOpen.some((b) => b.probeAt !== null && this.now() - b.probeAt < cooldown)) return false;
    for (const b of halfOpen) b.probeAt = this.now();
    return true;
  }

  /** The provider answered a vend (whatever it said): its breakers close. */
  succeeded(provider: string, service: string): void {
    for (const [name, breaker] of this.pair(provider, service)) {
      const wasOpen = breaker.openUntil !== null;
      breaker.failures = 0;
      breaker.openUntil = null;
      breaker.probeAt = null;
      if (wasOpen) this.publish(provider, name, breaker, "closed");
    }
  }

  /** No answer or an unreadable one (timeout, broken connection, 5xx, garbage): counts toward opening its breakers. */
  failed(provider: string, service: string): void {
    for (const [name, breaker] of this.pair(provider, service)) {
      breaker.failures += 1;
      const state = this.stateOf(breaker);
      if (state === "half_open" || (state === "closed" && breaker.failures >= this.rules.breaker.failures)) {
        breaker.openUntil = this.now() + this.rules.breaker.cooldownMs;
        breaker.probeAt = null;
        this.logger.warn(
          { provider, service: name || undefined, failures: breaker.failures, until: new Date(breaker.openUntil).toISOString() },
          "provider breaker opened",
        );
        this.publish(provider, name, breaker, "open");
      }
    }
  }

  /** The provider-wide breaker, then each service breaker this process knows of. */
  breakersOf(provider: string): BreakerView[] {
    const views: BreakerView[] = [];
    for (const [key, breaker] of this.breakers) {
      const [name, service] = key.split("\u0000") as [string, string];
      if (name !== provider || service === "") continue;
      views.push(this.view(service, breaker));
    }
    views.sort((a, b) => String(a.service).localeCompare(String(b.service)));
    return [this.view("", this.breaker(provider, "")), ...views];
  }

  private view(service: string, breaker: Breaker): BreakerView {
    return {
      service: service || null,
      state: this.stateOf(breaker),
      consecutiveFailures: breaker.failures,
      openUntil: breaker.openUntil === null ? null : new Date(breaker.openUntil),
    };
  }

  private stateOf(breaker: Breaker): BreakerState {
    if (breaker.openUntil === null) return "closed";
    return this.now() < breaker.openUntil ? "open" : "half_open";
  }

  private breaker(provider: string, service: string): Breaker {
    const key = keyOf(provider, service);
    let breaker = this.breakers.get(key);
    if (!breaker) {
      breaker = { failures: 0, openUntil: null, probeAt: null, syncedAt: 0, writing: 0 };
      this.breakers.set(key, breaker);
    }
    return breaker;
  }

  private pair(provider: string, service: string): [string, Breaker][] {
    return [
      ["", this.breaker(provider, "")],
      [service, this.breaker(provider, service)],
    ];
  }

  /** Resolves once every breaker change this process has made is written for the others. */
  async flush(): Promise<void> {
    await Promise.all(this.sharing);
  }

  /** Shares a transition with the other processes; a failed write leaves them to find out for themselves. */
  private publish(provider: string, service: string, breaker: Breaker, state: "open" | "closed"): void {
    const openUntil = breaker.openUntil === null ? null : new Date(breaker.openUntil).toISOString();
    const write = queryRows<{ updated_at: Date | string }>(
      this.db,
      sql`with written as (
            insert into provider_breakers (provider, service, state, consecutive_failures, open_until, updated_at)
            values (${provider}, ${service}, ${state}, ${breaker.failures}, ${openUntil}::timestamptz, clock_timestamp())
            on conflict (provider, service) do update
            set state = excluded.state, consecutive_failures = excluded.consecutive_failures,
                open_until = excluded.open_until, updated_at = excluded.updated_at
            returning updated_at
          )
          select written.updated_at from written, ${announce}`,
    ).then(
      ([row]) => {
        const at = toDate(row?.updated_at ?? null)?.getTime();
        if (at !== undefined && at > breaker.syncedAt) breaker.syncedAt = at;
      },
      (error) =>
        this.logger.warn(
          { provider, service: service || undefined, err: error instanceof Error ? error.message : String(error) },
          "could not share a breaker change",
        ),
    );
    breaker.writing += 1;
    this.sharing.add(write);
    void write.finally(() => {
      breaker.writing -= 1;
      this.sharing.delete(write);
    });
  }
}

/**
 * Writes an operator's switch on `db` (the caller's transaction, say) and answers the provider's switch as
 * written, without applying it here: `refresh` does that once it has committed.
 */
export async function writeSwitch(
  db: Executor,
  provider: string,
  enabled: boolean,
  reason: string | null,
): Promise<ProviderSwitch> {
  const [row] = await queryRows<SwitchRow>(
    db,
    sql`with written as (
          insert into provider_states (provider, enabled, disabled_reason, disabled_at, updated_at)
          values (${provider}, ${enabled}, ${enabled ? null : reason}, ${enabled ? null : sql`now()`}, now())
          on conflict (provider) do update
          set enabled = excluded.enabled, updated_at = now(),
              disabled_reason = case when excluded.enabled then null
                                     when provider_states.enabled then excluded.disabled_reason
                                     else provider_states.disabled_reason end,
              disabled_at = case when excluded.enabled then null
                                 when provider_states.enabled then excluded.disabled_at
                                 else provider_states.disabled_at end
          returning enabled, disabled_reason, disabled_at, balance_kobo, balance_checked_at
        )
        select written.* from written, ${announce}`,
  );
  if (!row) throw new Error("provider switch upsert returned nothing");
  return switchOfRow(row);
}

function toDate(value: Date | string | null): Date | null {
  if (value === null) return null;
  return value instanceof Date ? value : new Date(value);
}
