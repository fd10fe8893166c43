import type { Config } from "../../config.ts";
import type { Executor } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import type { Task } from "../../lib/job-queue.ts";
import type { Logger } from "../../logger.ts";
import type { Metrics } from "../../metrics/metrics.ts";
import { compareCatalogue, fetchSyncLists } from "../../provider-admin/catalogue-sync.ts";
import { raiseAnomaly } from "../../providers/anomalies.ts";
import type { Providers } from "../../providers/registry.ts";

export interface CatalogueDriftDeps {
  db: Executor;
  logger: Logger;
  metrics: Metrics;
  providers: Providers;
  config: Config;
}

/**
 * The scheduled catalogue sync: a dry run for every live provider that can list its plans, which only reports.
 * Differences raise a `catalogue_drift` anomaly once per distinct set (its fingerprint is the anomaly's
 * reference) and set `vend_catalogue_drift`; nothing is ever applied. A provider that cannot answer is logged
 * and counted. Returns how many providers drifted.
 */
export async function checkCatalogueDrift(deps: CatalogueDriftDeps): Promise<number> {
  let drifted = 0;
  for (const { name, mode, adapter } of deps.providers.list()) {
    if (mode !== "live" || !adapter.listPlans) continue;
    let lists: Awaited<ReturnType<typeof fetchSyncLists>>;
    try {
      lists = await fetchSyncLists(deps, name);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== "PROVIDER_ERROR") throw error;
      deps.logger.warn({ provider: name, err: error.message }, "scheduled catalogue sync: no plan list");
      deps.metrics.catalogueChecked(name, "failed");
      continue;
    }
    const { sync } = await compareCatalogue(deps.db, deps, lists);
    const takenOff = sync.dropped.filter((drop) => drop.action === "take_off_sale").length;
    const found = { new_plan: sync.new_plans.length, price_change: sync.price_changes.length, dropped: sync.dropped.length };
    deps.metrics.catalogueChecked(name, found);
    if (found.new_plan + found.price_change + found.dropped === 0) continue;
    drifted += 1;
    await raiseAnomaly(deps.db, deps.logger, {
      kind: "catalogue_drift",
      provider: name,
      reference: `sync:${sync.fingerprint}`,
      message:
        `${name}'s plan list differs from the catalogue: ${found.price_change} price change(s), ${found.dropped} plan(s) dropped ` +
        `(${takenOff} product(s) no other provider delivers), ${found.new_plan} new plan(s); nothing was applied: ` +
        `vendctl catalogue sync --provider ${name}`,
    });
  }
  return drifted;
}

/** The check as periodic background work, every CATALOGUE_SYNC_INTERVAL; none when it is off. */
export function catalogueDriftTasks(deps: CatalogueDriftDeps): Task[] {
  const everyMs = deps.config.operations.catalogueSyncIntervalMs;
  if (everyMs === undefined) return [];
  return [{ name: "catalogue sync", everyMs, run: () => checkCatalogueDrift(deps) }];
}
