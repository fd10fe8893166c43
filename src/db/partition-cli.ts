import postgres from "postgres";
import { defaultMonthsAhead, partitionHistory } from "./partitions.ts";

/**
 * `npm run db:partition [-- --months-ahead N]`: converts the history of the PostgreSQL database at DATABASE_URL
 * into monthly partitions (see partitionHistory). Run it after `npm run migrate`; a second run changes nothing.
 * Reads DATABASE_URL itself: it has nothing to do with the embedded database.
 */
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL: partitioning is for PostgreSQL (the embedded database stays unpartitioned).");
  process.exit(2);
}
const flag = process.argv.indexOf("--months-ahead");
const monthsAhead = flag >= 0 ? Number(process.argv[flag + 1]) : defaultMonthsAhead;
if (!Number.isInteger(monthsAhead) || monthsAhead < 0) {
  console.error("--months-ahead takes a whole number of months.");
  process.exit(2);
}
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
