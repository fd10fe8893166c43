import type { Column } from "../output.ts";
import type { SentBatch, VendBatch } from "./batches.ts";
import type { ResultRow } from "./results.ts";

const statusNames = ["queued", "processing", "pending", "successful", "failed", "refused", "invalid", "not_sent"] as const;
type Counts = Record<(typeof statusNames)[number], number>;

/** What `vend bulk` prints: the files, each batch and its key, and the orders by status. */
export interface BulkSummary {
  file: string;
  results: string;
  file_sha256: string;
  orders: number;
  /** Every batch has `completed_at`: every order is final. */
  complete: boolean;
  counts: Counts;
  batches: {
    number: number;
    id: string;
    first_line: number;
    last_line: number;
    order_count: number;
    idempotency_key: string;
    replayed: boolean;
    completed_at: string | null;
  }[];
}

export function summaryOf(input: {
  file: string;
  out: string;
  digest: string;
  sent: SentBatch[];
  batches: VendBatch[];
  rows: ResultRow[];
}): BulkSummary {
  const counts = Object.fromEntries(statusNames.map((s) => [s, 0])) as Counts;
  for (const row of input.rows) {
    const name = statusNames.find((s) => s === row.status);
    if (name) counts[name]++;
  }
  const batches = input.sent.map((s, index) => ({
    number: s.number,
    id: s.batch.id,
    first_line: s.firstLine,
    last_line: s.lastLine,
    order_count: s.orders.length,
    idempotency_key: s.idempotencyKey,
    replayed: s.replayed,
    completed_at: input.batches[index]?.completed_at ?? null,
  }));
  return {
    file: input.file,
    results: input.out,
    file_sha256: input.digest,
    orders: input.rows.length,
    complete: batches.every((b) => b.completed_at !== null),
    counts,
    batches,
  };
}

function batchesCell(summary: BulkSummary): string {
  const replayed = summary.batches.filter((b) => b.replayed).length;
  return replayed === 0
    ? String(summary.batches.length)
    : `${summary.batches.length} (${replayed} replayed: sent by an earlier run)`;
}

const count = (name: keyof Counts): Column<BulkSummary> => ({ key: name, get: (s) => s.counts[name] });

/** The table: files, batches, orders by status. */
export const summaryColumns: Column<BulkSummary>[] = [
  { key: "file" },
  { key: "results" },
  { key: "orders" },
  { key: "batches", get: batchesCell },
  count("successful"),
  count("failed"),
  { key: "open", header: "NOT FINAL", get: (s) => s.counts.queued + s.counts.processing + s.counts.pending },
  count("refused"),
  count("invalid"),
  { ...count("not_sent"), header: "NOT SENT" },
  { key: "complete" },
];
