import { stringify } from "csv-stringify/sync";
import { unwrap, type VendClient } from "../client.ts";
import type { Transaction } from "../views.ts";
import type { PlannedBatch, SentBatch, VendBatch } from "./batches.ts";
import { type BulkOrder, lineKey } from "./orders.ts";

/** One line of the results file: what became of one row of the input. */
export interface ResultRow {
  line: number;
  client_reference: string | null;
  batch_id: string | null;
  /** A transaction status, or `refused` (402), `invalid` (400), `not_sent` (a run that stopped first). */
  status: string;
  reference: string | null;
  amount_kobo: number | null;
  price_kobo: number | null;
  error_code: string | null;
  error_message: string | null;
  token: string | null;
  units: string | null;
}

export const resultColumns = [
  "line",
  "client_reference",
  "batch_id",
  "status",
  "reference",
  "amount_kobo",
  "price_kobo",
  "error_code",
  "error_message",
  "token",
  "units",
] as const satisfies readonly (keyof ResultRow)[];

/** Every order of a batch (GET /api/v1/vend/batches/{id}, following its cursors), and the batch as it now stands. */
export async function batchOrders(client: VendClient, id: string): Promise<{ batch: VendBatch; orders: Transaction[] }> {
  const orders: Transaction[] = [];
  let cursor: string | undefined;
  let batch: VendBatch | undefined;
  do {
    const query = { limit: 100, ...(cursor ? { cursor } : {}) };
    const detail = await unwrap(client.GET("/api/v1/vend/batches/{id}", { params: { path: { id }, query } }));
    batch = detail.batch;
    orders.push(...detail.orders.items);
    cursor = detail.orders.page.has_more ? (detail.orders.page.next_cursor ?? undefined) : undefined;
  } while (cursor);
  return { batch, orders };
}

const blank = (order: BulkOrder, batchId: string | null, status: string): ResultRow => ({
  line: order.line,
  client_reference: order.clientReference,
  batch_id: batchId,
  status,
  reference: null,
  amount_kobo: null,
  price_kobo: null,
  error_code: null,
  error_message: null,
  token: null,
  units: null,
});

/** The results of one accepted batch: its transactions matched to their rows by line, its rejections by index. */
export function batchResults(sent: PlannedBatch, batch: VendBatch, orders: Transaction[]): ResultRow[] {
  const byLine = new Map(orders.map((t) => [String(t.metadata[lineKey] ?? ""), t]));
  const rejected = new Map(batch.rejections.map((r) => [r.index, r]));
  return sent.orders.map((order, index) => {
    const rejection = rejected.get(index);
    if (rejection) {
      const fields = rejection.error.data?.errors.map((e) => `${e.field}: ${e.message}`) ?? [];
      return {
        ...blank(order, batch.id, rejection.status === 402 ? "refused" : "invalid"),
        error_code: rejection.error.code,
        error_message: [rejection.error.message, ...fields].join("; "),
      };
    }
    const transaction = byLine.get(String(order.line));
    if (!transaction) return { ...blank(order, batch.id, "unknown"), error_message: "no transaction of the batch has this line" };
    return {
      ...blank(order, batch.id, transaction.status),
      reference: transaction.reference,
      amount_kobo: transaction.amount_kobo,
      price_kobo: transaction.price_kobo,
      token: transaction.metadata.token ?? null,
      units: transaction.metadata.units ?? null,
    };
  });
}

/** Rows of batches that were never accepted. */
export const unsentResults = (batches: PlannedBatch[]): ResultRow[] =>
  batches.flatMap((b) => b.orders.map((order) => blank(order, null, "not_sent")));

/** Results of every batch, read now from the API, in input order. */
export async function collectResults(
  client: VendClient,
  sent: SentBatch[],
  unsent: PlannedBatch[],
): Promise<{ rows: ResultRow[]; batches: VendBatch[] }> {
  const rows: ResultRow[] = [];
  const batches: VendBatch[] = [];
  for (const planned of sent) {
    const { batch, orders } = await batchOrders(client, planned.batch.id);
    batches.push(batch);
    rows.push(...batchResults(planned, batch, orders));
  }
  rows.push(...unsentResults(unsent));
  return { rows: rows.sort((a, b) => a.line - b.line), batches };
}

/** The results file: a header row, then one row per input row. */
export const resultsCsv = (rows: ResultRow[]): string =>
  stringify([[...resultColumns], ...rows.map((row) => resultColumns.map((c) => row[c] ?? ""))]);
