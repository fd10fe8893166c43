import postgres from "postgres";
import { defaultMonthsAhead, partitionHistory } from "./partitions.ts";

/**
 * `vend partition [--months-ahead N]`: converts the history of the PostgreSQL database at DATABASE_URL into
 * monthly partitions (see partitionHistory). Run it after `vend migrate`; a second run changes nothing. Reads
 * DATABASE_URL itself: it has nothing to do with the embedded database. Returns a one-line refusal, or nothing.
 */
export async function partitionDatabase(monthsAhead = defaultMonthsAhead): Promise<string | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) return "Set DATABASE_URL: partitioning is for PostgreSQL (the embedded database stays unpartitioned).";
  if (!Number.isInteger(monthsAhead) || monthsAhead < 0) return "--months-ahead takes a whole number of months.";
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const { table, outcome, rows, partitions } of await partitionHistory(client, monthsAhead))
      console.log(
        outcome === "converted"
          ? `${table}: partitioned by month (${rows} rows in ${partitions} partitions)`
          : `${table}: already partitioned`,
      );
  } finally {
    await client.end({ timeout: 5 });
  }
  return undefined;
}
