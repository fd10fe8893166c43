import { eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { providerFloatTopups } from "../db/schema/index.ts";
import { validationError } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import { parseRange } from "../lib/instants.ts";
import { floatSteps, floatToleranceOf } from "../providers/float.ts";
import { knownProvider, type ProviderAdminDeps } from "./provider-status.ts";

type Schemas = components["schemas"];
type TopupRow = typeof providerFloatTopups.$inferSelect;

const presentTopup = (row: TopupRow): Schemas["FloatTopup"] => ({
  id: row.id,
  provider: row.provider,
  amount_kobo: row.amountKobo,
  note: row.note,
  occurred_at: row.occurredAt.toISOString(),
  created_at: row.createdAt.toISOString(),
});

/** A top-up's time may run ahead of ours by this much (the operator's clock), no more. */
const clockSkewMs = 60_000;
const earliestTopup = Date.parse("2000-01-01T00:00:00Z");

/** When the money reached the provider: the body's `occurred_at` (not in the future), else now. */
function occurredAt(value: string | undefined) {
  if (value === undefined) return sql`now()`;
  const millis = Date.parse(value);
  if (Number.isNaN(millis)) throw validationError([{ field: "occurred_at", message: "must be a valid date-time" }]);
  if (millis > Date.now() + clockSkewMs) throw validationError([{ field: "occurred_at", message: "must not be in the future" }]);
  if (millis < earliestTopup) throw validationError([{ field: "occurred_at", message: "must be 2000-01-01 or later" }]);
  return new Date(millis);
}

/** An operator's record of money put on a provider's float, written on `deps.db` (the audited transaction). */
export async function recordFloatTopup(
  deps: ProviderAdminDeps,
  name: string,
  body: Schemas["FloatTopupRequest"],
): Promise<Schemas["FloatTopup"]> {
  knownProvider(deps.providers, name);
  const [row] = await deps.db
    .insert(providerFloatTopups)
    .values({ provider: name, amountKobo: body.amount_kobo, note: body.note, occurredAt: occurredAt(body.occurred_at) })
    .returning();
  if (!row) throw new Error(`float top-up of ${name} not written`);
  return presentTopup(row);
}

export function listFloatTopups(
  deps: ProviderAdminDeps & { cursors: CursorCodec },
  name: string,
  query: { cursor?: string; limit?: number },
): Promise<Page<Schemas["FloatTopup"]>> {
  knownProvider(deps.providers, name);
  const request = {
    cursors: deps.cursors,
    scope: `float_topups:${name}`,
    filters: {},
    query,
    conditions: [eq(providerFloatTopups.provider, name)],
  };
  return readNewestFirst(deps.db, providerFloatTopups, "createdAt", request, (rows) => rows.map(presentTopup));
}

/** The walk over the provider's float samples taken from `from` to `to` (`floatSteps`). */
export async function floatReconciliation(
  deps: ProviderAdminDeps,
  name: string,
  query: { from: string; to: string },
): Promise<Schemas["FloatReconciliation"]> {
  knownProvider(deps.providers, name);
  const range = parseRange(query.from, query.to);
  const from = range.from ?? new Date(0);
  const to = range.to ?? new Date();
  const tolerance = floatToleranceOf(deps.config.routing, name);
  const walk = await floatSteps(deps.db, name, from, to, tolerance);
  return {
    provider: name,
    from: from.toISOString(),
    to: to.toISOString(),
    tolerance_kobo: tolerance,
    samples: walk.samples,
    truncated: walk.truncated,
    steps: walk.steps.map((step) => ({
      from_sampled_at: step.fromSampledAt.toISOString(),
      to_sampled_at: step.toSampledAt.toISOString(),
      start_kobo: step.startKobo,
      end_kobo: step.endKobo,
      topups_kobo: step.topupsKobo,
      costs_kobo: step.costsKobo,
      reversals_kobo: step.reversalsKobo,
      expected_change_kobo: step.expectedChangeKobo,
      actual_change_kobo: step.actualChangeKobo,
      difference_kobo: step.differenceKobo,
      in_flight_start_kobo: step.inFlightStartKobo,
      in_flight_end_kobo: step.inFlightEndKobo,
      within_tolerance: step.withinTolerance,
    })),
  };
}
