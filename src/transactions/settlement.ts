import { and, asc, count, eq, gte, lt, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { validationError } from "../errors.ts";
import type { Mode } from "../lib/scope.ts";

type SettlementReport = components["schemas"]["SettlementReport"];

export interface SettlementQuery {
  provider: string;
  /** `YYYY-MM-DD`, a calendar day in Africa/Lagos time. */
  date: string;
  mode?: Mode;
}

/** Nigerian providers count days in West Africa Time: UTC+01:00 all year, no daylight saving. */
const lagosOffsetMs = 60 * 60 * 1000;
const dayMs = 24 * 60 * 60 * 1000;

/** Days before this are refused: nothing was vended then, and far years do not survive the trip to the database. */
const earliestDay = "2000-01-01";

/** The instants a Lagos calendar day runs between: `from` inclusive, `to` exclusive; `400` naming `field` otherwise. */
export function lagosDay(date: string, field = "date"): { from: Date; to: Date } {
  const midnightUtc = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(midnightUtc) || new Date(midnightUtc).toISOString().slice(0, 10) !== date) {
    throw validationError([{ field, message: "must be a calendar day, YYYY-MM-DD" }]);
  }
  if (date < earliestDay) throw validationError([{ field, message: `must be ${earliestDay} or later` }]);
  const from = new Date(midnightUtc - lagosOffsetMs);
  return { from, to: new Date(from.getTime() + dayMs) };
}

const sumOf = (column: typeof transactions.amountKobo) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);

/**
 * What we owe one provider for one Lagos day by our records: the mode's successful transactions with that
 * provider completed on the day, in total and per service and network (face value and what clients paid).
 * Read through the settlement index (provider, completed_at of successful orders).
 */
export async function settlementReport(db: Executor, query: SettlementQuery): Promise<SettlementReport> {
  const mode = query.mode ?? "live";
  const { from, to } = lagosDay(query.date);
  const lines = await db
    .select({
      service: transactions.service,
      network: transactions.network,
      count: count(),
      amountKobo: sumOf(transactions.amountKobo),
      priceKobo: sumOf(transactions.priceKobo),
    })
    .from(transactions)
    .where(
      and(
        eq(transactions.status, "successful"),
        eq(transactions.provider, query.provider),
        gte(transactions.completedAt, from),
        lt(transactions.completedAt, to),
        eq(transactions.mode, mode),
      ),
    )
    .groupBy(transactions.service, transactions.network)
    .orderBy(asc(transactions.service), asc(transactions.network));
  const byService = lines.map((line) => ({
    service: line.service as SettlementReport["by_service"][number]["service"],
    network: line.network,
    count: Number(line.count),
    amount_kobo: line.amountKobo,
    price_kobo: line.priceKobo,
  }));
  const total = (pick: (line: (typeof byService)[number]) => number) => byService.reduce((sum, line) => sum + pick(line), 0);
  return {
    provider: query.provider,
    mode,
    date: query.date,
    timezone: "Africa/Lagos",
    from: from.toISOString(),
    to: to.toISOString(),
    count: total((line) => line.count),
    amount_kobo: total((line) => line.amount_kobo),
    price_kobo: total((line) => line.price_kobo),
    by_service: byService,
  };
}
