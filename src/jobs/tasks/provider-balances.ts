import type { Config } from "../../config.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Task } from "../../lib/job-queue.ts";
import { formatNgn } from "../../lib/shared/money.ts";
import type { Logger } from "../../logger.ts";
import type { Metrics } from "../../metrics/metrics.ts";
import { raiseAnomaly } from "../../providers/anomalies.ts";
import { floatToleranceOf, recordFloatSample } from "../../providers/float.ts";
import type { Providers } from "../../providers/registry.ts";
import { ProviderUnavailableError } from "../../providers/types.ts";

export interface BalanceDeps {
  db: Executor;
  logger: Logger;
  providers: Providers;
  config: Config;
  /** Where float mismatches are counted; absent where nothing is exposed. */
  metrics?: Metrics;
}

/**
 * Asks every provider that can report its float for it, records it (shown in the providers' list and
 * stats), and raises a `low_balance` anomaly when it falls below the provider's threshold: once per
 * crossing (when the last figure was above it, or there was none); it re-arms once the float is back up.
 * Every figure is also kept as a float sample and reconciled with the one before it (`recordFloatSample`:
 * a `float_mismatch` anomaly, counted by `vend_provider_float_mismatch_total`, when they disagree beyond the
 * tolerance). A provider that cannot answer is logged and asked again next time. Returns how many answered.
 */
export async function checkProviderBalances(deps: BalanceDeps): Promise<number> {
  let answered = 0;
  for (const { name, adapter } of deps.providers.list()) {
    if (!adapter.balance) continue;
    deps.metrics?.watchFloat(name);
    let balanceKobo: number;
    try {
      balanceKobo = await adapter.balance();
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      deps.logger.warn({ provider: name, err: error.message }, "provider balance check failed");
      continue;
    }
    answered += 1;
    const previous = await deps.providers.health.recordBalance(name, balanceKobo);
    const tolerance = floatToleranceOf(deps.config.routing, name);
    const step = await recordFloatSample(deps.db, deps.logger, name, balanceKobo, tolerance);
    if (step && !step.withinTolerance) deps.metrics?.floatMismatched(name);
    const threshold = deps.config.routing.lowBalanceKobo[name];
    if (threshold === undefined || balanceKobo >= threshold || (previous !== null && previous < threshold)) continue;
    await raiseAnomaly(deps.db, deps.logger, {
      kind: "low_balance",
      provider: name,
      message: `${name}'s float is NGN ${formatNgn(balanceKobo)}, below its threshold of NGN ${formatNgn(threshold)}; top it up or its orders will be refused`,
    });
  }
  return answered;
}

/** The balance check as periodic background work, every `balanceCheckMs`. */
export function providerBalanceTask(deps: BalanceDeps): Task {
  return { name: "provider balances", everyMs: deps.config.routing.balanceCheckMs, run: () => checkProviderBalances(deps) };
}
