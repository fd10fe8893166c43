import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap, type VendClient } from "../client.ts";
import type { Progress } from "../progress.ts";
import type { SentBatch, VendBatch } from "./batches.ts";

export type BatchCounts = components["schemas"]["VendBatchCounts"];
const countNames = ["queued", "processing", "pending", "successful", "failed", "refused", "invalid"] as const;

export const emptyCounts = (): BatchCounts => ({
  queued: 0,
  processing: 0,
  pending: 0,
  successful: 0,
  failed: 0,
  refused: 0,
  invalid: 0,
});

export function addCounts(batches: VendBatch[]): BatchCounts {
  const total = emptyCounts();
  for (const batch of batches) for (const name of countNames) total[name] += batch.counts[name];
  return total;
}

/** Orders that will not change any more: final transactions and the ones the API refused. */
export const finalCount = (c: BatchCounts): number => c.successful + c.failed + c.refused + c.invalid;

/** `Sent 150 of 300 orders (3 of 6 batches) · 120 final: 110 successful, 10 failed · 5 refused, 3 invalid`. */
export function progressText(
  sentOrders: number,
  totalOrders: number,
  sentBatches: number,
  totalBatches: number,
  counts: BatchCounts,
): string {
  const parts = [
    `Sent ${sentOrders} of ${totalOrders} orders (${sentBatches} of ${totalBatches} batches)`,
    `${finalCount(counts)} final: ${counts.successful} successful, ${counts.failed} failed`,
  ];
  if (counts.refused + counts.invalid > 0) parts.push(`${counts.refused} refused, ${counts.invalid} invalid`);
  return parts.join(" · ");
}

/** Polls the API no faster than this. */
const pollMs = 1000;

/**
 * Reads each batch's counts (GET /api/v1/vend/batches/{id}, one order a page) until every batch has
 * `completed_at` or `seconds` have passed; the spinner shows the totals. Returns the batches as last seen.
 */
export async function followBatches(
  client: VendClient,
  sent: SentBatch[],
  seconds: number,
  spinner: Progress,
  totalOrders: number,
): Promise<VendBatch[]> {
  const latest = sent.map((s) => s.batch);
  const deadline = Date.now() + seconds * 1000;
  const show = () => spinner.update(progressText(totalOrders, totalOrders, sent.length, sent.length, addCounts(latest)));
  show();
  while (latest.some((b) => b.completed_at === null) && Date.now() < deadline) {
    const started = Date.now();
    for (const [index, batch] of latest.entries()) {
      if (batch.completed_at !== null) continue;
      const detail = await unwrap(
        client.GET("/api/v1/vend/batches/{id}", { params: { path: { id: batch.id }, query: { limit: 1 } } }),
      );
      latest[index] = detail.batch;
      show();
    }
    if (latest.every((b) => b.completed_at !== null)) break;
    const pause = Math.min(pollMs - (Date.now() - started), deadline - Date.now());
    if (pause > 0) await Bun.sleep(pause);
  }
  return latest;
}
