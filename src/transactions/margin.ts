import { and, asc, count, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { providerAttempts, transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { validationError } from "../errors.ts";
import type { Mode } from "../lib/scope.ts";
import { lagosDay } from "./settlement.ts";

type MarginReport = components["schemas"]["MarginReport"];
type GroupBy = components["schemas"]["MarginGroupBy"];
type Figures = components["schemas"]["MarginFigures"];

export interface MarginQuery {
  /** `YYYY-MM-DD`, Lagos days, both inclusive. */
  from: string;
  to: string;
  group_by?: GroupBy;
  mode?: Mode;
}

const longestRangeDays = 366;
const dayMs = 24 * 60 * 60 * 1000;

/** A group's key as text; a day is the Lagos calendar day (UTC+01:00, as `lagosDay`) of `completed_at`. */
const keyOf: Record<GroupBy, SQL<string>> = {
  provider: sql<string>`${transactions.provider}`,
  service: sql<string>`${transactions.service}`,
  network: sql<string>`${transactions.network}`,
  account: sql<string>`${transactions.accountId}::text`,
  day: sql<string>`to_char((${transactions.completedAt} at time zone 'UTC') + interval '1 hour', 'YYYY-MM-DD')`,
};

const total = (column: SQL | typeof transactions.amountKobo) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);

/**
 * Successful orders of a mode completed within the Lagos days `from`..`to`, by group: count, face value,
 * price charged, the cost recorded on the attempt that delivered each (the attempt at the provider the order
 * completed with) and the margin, plus totals. An attempt without a recorded cost counts 0 (`uncosted`).
 */
export async function marginReport(db: Executor, query: MarginQuery): Promise<MarginReport> {
  const mode = query.mode ?? "live";
  const groupBy = query.group_by ?? "provider";
  const first = lagosDay(query.from, "from");
  const last = lagosDay(query.to, "to");
  if (last.from < first.from) throw validationError([{ field: "to", message: "must not be before from" }]);
  if ((last.from.getTime() - first.from.getTime()) / dayMs >= longestRangeDays) {
    throw validationError([{ field: "to", message: `must be within ${longestRangeDays} days of from` }]);
  }
  const key = keyOf[groupBy];
  const lines = await db
    .select({
      key,
      count: count(),
      amountKobo: total(transactions.amountKobo),
      priceKobo: total(transactions.priceKobo),
      costKobo: total(sql`${providerAttempts.costKobo}`),
      uncosted: sql<number>`count(*) filter (where ${providerAttempts.costKobo} is null)`.mapWith(Number),
    })
    .from(transactions)
    .leftJoin(
      providerAttempts,
      and(eq(providerAttempts.transactionId, transactions.id), eq(providerAttempts.provider, transactions.provider)),
    )
    .where(
      and(
        eq(transactions.status, "successful"),
        gte(transactions.completedAt, first.from),
        lt(transactions.completedAt, last.to),
        eq(transactions.mode, mode),
      ),
    )
    .groupBy(key)
    .orderBy(asc(key));
  const rows = lines.map((line) => ({
    key: String(line.key),
    ...figures(Number(line.count), line.amountKobo, line.priceKobo, line.costKobo, line.uncosted),
  }));
  const sum = (pick: (row: Figures) => number) => rows.reduce((acc, row) => acc + pick(row), 0);
  return {
    mode,
    group_by: groupBy,
    from_date: query.from,
    to_date: query.to,
    timezone: "Africa/Lagos",
    from: first.from.toISOString(),
    to: last.to.toISOString(),
    rows,
    total: figures(
      sum((r) => r.count),
      sum((r) => r.amount_kobo),
      sum((r) => r.price_kobo),
      sum((r) => r.cost_kobo),
      sum((r) => r.uncosted),
    ),
  };
}

const figures = (count: number, amount: number, price: number, cost: number, uncosted: number): Figures => ({
  count,
  amount_kobo: amount,
  price_kobo: price,
  cost_kobo: cost,
  margin_kobo: price - cost,
  uncosted,
});
