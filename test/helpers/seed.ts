import type { Database } from "../../src/db/client.ts";
import { transactions } from "../../src/db/schema/index.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import type { TransactionRow } from "../../src/orders/view.ts";

export type NewTransactionRow = typeof transactions.$inferInsert;
type Status = TransactionRow["status"];

export interface SeedOptions {
  accountId: string;
  mode: "test" | "live";
  count: number;
  /** Time of the first (newest) row; later rows go back in time from it. Default: now. */
  newest?: Date;
  /** Milliseconds between consecutive rows; every fifth row shares its predecessor's millisecond. Default 60 000. */
  stepMs?: number;
  /** Values set on every row. */
  overrides?: Partial<NewTransactionRow>;
  /** Values for row `index`, applied after `overrides`. */
  generate?: (index: number) => Partial<NewTransactionRow>;
  /** Rows per insert statement. Default 500. */
  batchSize?: number;
}

export const seedPhones = Array.from({ length: 24 }, (_, k) => {
  const prefixes = ["0803", "0805", "0813", "0703", "0706", "0810", "0901", "0908", "0802", "0708", "0812", "0907"];
  return `${prefixes[k % prefixes.length]}${String(1_000_000 + ((k * 3_917_143) % 9_000_000)).padStart(7, "0")}`;
});
export const seedMeters = Array.from({ length: 8 }, (_, k) => `45${String(100_000_000 + k * 7_654_321).slice(0, 9)}`);
export const seedSmartcards = Array.from({ length: 6 }, (_, k) => `70${String(10_000_000 + k * 1_234_567).slice(0, 8)}`);

const telecoms = ["mtn", "airtel", "glo", "9mobile"];
const discos = ["ikedc", "ekedc", "aedc", "phed"];
const billers = ["dstv", "gotv"];
const dataPlans = ["data-1gb-1d", "data-2gb-30d", "data-500mb-7d"];
// 20 slots: mostly successful, then failed, pending and the rest.
const statuses: Status[] = [
  ...Array<Status>(11).fill("successful"),
  "failed",
  "failed",
  "failed",
  "pending",
  "pending",
  "queued",
  "processing",
  "reversed",
  "refunded",
];
const finalStatuses = new Set<Status>(["successful", "failed", "reversed", "refunded"]);

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T;

/** A realistic row of one of the four services; spread so filters select different subsets. */
function sampleRow(index: number, tag: string): Omit<NewTransactionRow, "accountId" | "mode" | "createdAt"> {
  const slot = (index * 7) % 10;
  const status = pick(statuses, index * 3);
  const clientReference = index % 3 === 0 ? null : `order-${tag}-${index}`;
  const base = { reference: `txn_${randomBase62(24)}`, status, clientReference, provider: "sandbox" };
  if (slot < 7) {
    const network = pick(telecoms, Math.floor(index / 2));
    const phone = pick(seedPhones, index * 5);
    const airtime = slot < 4;
    const amountKobo = airtime ? (1 + (index % 20)) * 5_000 : 50_000 + (index % 3) * 50_000;
    const productCode = airtime ? `${network}-airtime` : `${network}-${pick(dataPlans, index)}`;
    const metadata = { data_type: airtime ? "airtime" : "data", plan_name: productCode, route: "sandbox" };
    const priceKobo = airtime ? Math.round(amountKobo * 0.97) : amountKobo;
    return {
      ...base,
      service: airtime ? "airtime" : "data",
      network,
      destination: phone,
      productCode,
      amountKobo,
      priceKobo,
      metadata,
    };
  }
  if (slot < 9) {
    const network = pick(discos, index);
    const meter = pick(seedMeters, index);
    const amountKobo = 100_000 + (index % 5) * 50_000;
    const metadata = { meter_number: meter, phone_number: pick(seedPhones, index), meter_type: "prepaid", route: "sandbox" };
    return {
      ...base,
      service: "electricity",
      network,
      destination: meter,
      productCode: `${network}-prepaid`,
      amountKobo,
      priceKobo: amountKobo + 10_000,
      metadata,
    };
  }
  const network = pick(billers, index);
  const card = pick(seedSmartcards, index);
  const amountKobo = network === "dstv" ? 1_250_000 : 490_000;
  const metadata = { smartcard_number: card, plan_name: `${network}-compact`, route: "sandbox" };
  return {
    ...base,
    service: "cable",
    network,
    destination: card,
    productCode: `${network}-compact`,
    amountKobo,
    priceKobo: amountKobo,
    metadata,
  };
}

/** Bulk-inserts `count` transactions for one account and mode, newest first; returns the stored rows. */
export async function insertTransactions(db: Database, options: SeedOptions): Promise<TransactionRow[]> {
  const newest = (options.newest ?? new Date()).getTime();
  const step = options.stepMs ?? 60_000;
  const tag = randomBase62(6);
  const rows: NewTransactionRow[] = [];
  for (let index = 0; index < options.count; index++) {
    const createdAt = new Date(newest - (index - Math.floor(index / 5)) * step);
    const row: NewTransactionRow = {
      ...sampleRow(index, tag),
      accountId: options.accountId,
      mode: options.mode,
      createdAt,
      ...options.overrides,
      ...options.generate?.(index),
    };
    const created = row.createdAt ?? createdAt;
    if (row.completedAt === undefined && finalStatuses.has(row.status)) row.completedAt = new Date(created.getTime() + 4_000);
    if (row.completedAt) row.providerReference ??= `sbx_${randomBase62(16)}`;
    row.updatedAt ??= row.completedAt ?? created;
    rows.push(row);
  }
  const stored: TransactionRow[] = [];
  const batchSize = options.batchSize ?? 500;
  for (let start = 0; start < rows.length; start += batchSize) {
    stored.push(
      ...(await db
        .insert(transactions)
        .values(rows.slice(start, start + batchSize))
        .returning()),
    );
  }
  return stored;
}
