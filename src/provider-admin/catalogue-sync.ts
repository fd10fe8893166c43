import { createHash } from "node:crypto";
import type { components } from "../../generated/openapi-types.ts";
import { updateProducts } from "../catalogue/update-product.ts";
import type { Config } from "../config.ts";
import { products } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, validationError } from "../errors.ts";
import { callProvider, type ProviderCallDeps } from "../providers/call.ts";
import type { Providers } from "../providers/registry.ts";
import type { ProviderPlan, ProviderPlanList } from "../providers/types.ts";
import { knownProvider } from "./provider-status.ts";

type Schemas = components["schemas"];
type CatalogueSync = Schemas["CatalogueSync"];

export interface CatalogueSyncDeps extends ProviderCallDeps {
  providers: Providers;
  config: Config;
}

/**
 * What a sync compares: the provider's plan list, and, for the products it may have dropped, the lists of the
 * other live providers that map them (null: that provider could not answer, so it is taken to still deliver).
 */
export interface SyncLists {
  provider: string;
  list: ProviderPlanList;
  others: Map<string, ProviderPlanList | null>;
}

type ProductRow = Pick<typeof products.$inferSelect, "code" | "service" | "network" | "kind" | "priceKobo" | "active">;
type Edit = { code: string; patch: Schemas["ProductUpdateRequest"] };

const planKey = (plan: Pick<ProviderPlan, "service" | "network" | "code">) => `${plan.service}/${plan.network}/${plan.code}`;
const mappingOf = (config: Config, provider: string) => config.routing.productCodes[provider] ?? {};

/** One provider's plan list through `callProvider`: 404 unknown, 400 when it cannot list plans, 502 when it cannot answer. */
async function planListOf(deps: CatalogueSyncDeps, name: string): Promise<ProviderPlanList | "unavailable"> {
  const { adapter } = knownProvider(deps.providers, name);
  const listPlans = adapter.listPlans?.bind(adapter);
  if (!listPlans) {
    const able = deps.providers.list().filter((p) => p.adapter.listPlans);
    const names = able.length > 0 ? able.map((p) => p.name).join(", ") : "none is configured";
    throw validationError([{ field: "name", message: `${name} cannot list its plans (providers that can: ${names})` }]);
  }
  const answer = await callProvider(deps, name, "plans", listPlans);
  return answer.kind === "answered" ? answer.value : "unavailable";
}

/**
 * Asks the provider for its plans (nothing in the database is read, so this runs before any transaction); for
 * mapped plan codes it no longer lists, also the other live providers that map those products. The provider
 * not answering, or answering something unreadable, is 502 PROVIDER_ERROR.
 */
export async function fetchSyncLists(deps: CatalogueSyncDeps, name: string): Promise<SyncLists> {
  const list = await planListOf(deps, name);
  if (list === "unavailable") {
    throw new AppError("PROVIDER_ERROR", `${name} did not answer its plan list readably; nothing was compared or changed`);
  }
  const listed = new Set(list.plans.map((plan) => plan.code));
  const missing = Object.entries(mappingOf(deps.config, name)).flatMap(([product, code]) => (listed.has(code) ? [] : [product]));
  const others = new Map<string, ProviderPlanList | null>();
  for (const other of deps.providers.list()) {
    if (other.name === name || other.mode !== "live" || !other.adapter.listPlans) continue;
    if (!missing.some((product) => Object.hasOwn(mappingOf(deps.config, other.name), product))) continue;
    const answer = await planListOf(deps, other.name);
    others.set(other.name, answer === "unavailable" ? null : answer);
  }
  return { provider: name, list, others };
}

/**
 * Whether `other` can still deliver `product`: by its own list when it maps the product explicitly and its list
 * covers the service; otherwise (its default code, no list, no answer) it is taken to, so nothing is taken off
 * sale on a guess.
 */
function stillDelivers(deps: CatalogueSyncDeps, lists: SyncLists, other: string, product: ProductRow): boolean {
  const code = mappingOf(deps.config, other)[product.code];
  const list = lists.others.get(other);
  if (code === undefined || !list || !list.services.includes(product.service)) return true;
  return list.plans.some((plan) => planKey(plan) === planKey({ ...product, code }));
}

/** The differences between the lists and the catalogue, their fingerprint, and the edits that apply them. */
export async function compareCatalogue(
  db: Executor,
  deps: CatalogueSyncDeps,
  lists: SyncLists,
): Promise<{ sync: CatalogueSync; edits: Edit[] }> {
  const { provider, list } = lists;
  const mapping = mappingOf(deps.config, provider);
  const rows: ProductRow[] = await db
    .select({
      code: products.code,
      service: products.service,
      network: products.network,
      kind: products.kind,
      priceKobo: products.priceKobo,
      active: products.active,
    })
    .from(products)
    .orderBy(products.code);
  const listed = new Map(list.plans.map((plan) => [planKey(plan), plan]));
  const mappedKeys = new Set<string>();
  const sync: Omit<CatalogueSync, "fingerprint" | "in_sync" | "checked_at"> = {
    provider,
    services: [...list.services],
    plans_listed: list.plans.length,
    new_plans: [],
    price_changes: [],
    dropped: [],
  };
  const edits: Edit[] = [];
  for (const row of rows) {
    const code = mapping[row.code];
    if (code === undefined || !list.services.includes(row.service)) continue;
    const key = planKey({ ...row, code });
    mappedKeys.add(key);
    const plan = listed.get(key);
    if (plan) {
      if (row.kind !== "fixed" || row.priceKobo === plan.faceValueKobo) continue;
      sync.price_changes.push({
        product_code: row.code,
        plan_code: code,
        price_kobo: row.priceKobo ?? 0,
        face_value_kobo: plan.faceValueKobo,
      });
      edits.push({ code: row.code, patch: { price_kobo: plan.faceValueKobo } });
      continue;
    }
    if (!row.active) continue;
    const route = deps.providers.candidates("live", row).filter((name) => name !== provider);
    const deliveredBy = route.filter((other) => stillDelivers(deps, lists, other, row));
    const action = deliveredBy.length > 0 ? "keep" : "take_off_sale";
    sync.dropped.push({ product_code: row.code, plan_code: code, action, delivered_by: deliveredBy });
    if (action === "take_off_sale") edits.push({ code: row.code, patch: { active: false } });
  }
  sync.new_plans = list.plans
    .filter((plan) => !mappedKeys.has(planKey(plan)))
    .sort((a, b) => planKey(a).localeCompare(planKey(b)))
    .map((plan) => ({
      plan_code: plan.code,
      name: plan.name,
      service: plan.service,
      network: plan.network,
      face_value_kobo: plan.faceValueKobo,
    }));
  const fingerprint = createHash("sha256").update(JSON.stringify(sync)).digest("hex");
  return { sync: { ...sync, in_sync: edits.length === 0, fingerprint, checked_at: new Date().toISOString() }, edits };
}

/**
 * Applies the differences on `tx` through the product update (each `updated_at` moves, one `catalogue.updated`
 * carries the changes). With `fingerprint`, differences that are no longer those of the dry run are refused
 * (409 CONFLICT) and nothing changes.
 */
export async function applyCatalogueSync(
  tx: Executor,
  deps: CatalogueSyncDeps,
  lists: SyncLists,
  fingerprint: string | undefined,
): Promise<{ result: Schemas["CatalogueSyncResult"]; before: Schemas["Product"][] }> {
  const { sync, edits } = await compareCatalogue(tx, deps, lists);
  if (fingerprint !== undefined && fingerprint !== sync.fingerprint) {
    throw new AppError(
      "CONFLICT",
      `${lists.provider}'s differences changed since the dry run (fingerprint ${sync.fingerprint.slice(0, 12)}…, not ${fingerprint.slice(0, 12)}…); nothing was applied: run the dry run again`,
    );
  }
  const updated = await updateProducts(tx, edits);
  const changed = updated.filter((u) => u.changed);
  return { result: { sync, applied: changed.map((u) => u.after) }, before: changed.map((u) => u.before) };
}
