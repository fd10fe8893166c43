import { createHash } from "node:crypto";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { apiErrorOf, type VendClient } from "../client.ts";
import type { BulkOrder } from "./orders.ts";

export type VendBatch = components["schemas"]["VendBatch"];

/** The API takes at most this many orders in one batch. */
export const maxBatchSize = 1000;

/** Orders sent together under one Idempotency-Key. */
export interface PlannedBatch {
  /** 1 for the first batch of the file. */
  number: number;
  orders: BulkOrder[];
  firstLine: number;
  lastLine: number;
  idempotencyKey: string;
}

/** A batch the API accepted (or replayed). */
export interface SentBatch extends PlannedBatch {
  batch: VendBatch;
  replayed: boolean;
}

/** The SHA-256 of the file's bytes, in hex: the same file always gives the same keys. */
export const fileDigest = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * `vendctl-bulk-<sha256 of the file's bytes, hex>-<first line>-<last line>`: the same file split the same way
 * gives the same keys, so a second run replays the batches already accepted instead of vending them again.
 */
export const batchKey = (digest: string, firstLine: number, lastLine: number): string =>
  `vendctl-bulk-${digest}-${firstLine}-${lastLine}`;

/** The API refuses a body over 1 MiB (`413`); a batch stays under this many bytes of JSON. */
export const maxBatchBytes = 1_000_000;

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The end (exclusive) of the batch starting at `start`: at most `size` orders and `maxBatchBytes` of body. */
function batchEnd(orders: BulkOrder[], start: number, size: number): number {
  let bytes = jsonBytes({ orders: [] });
  let end = start;
  while (end < orders.length && end - start < size) {
    const next = jsonBytes(orders[end]?.order) + 1;
    if (end > start && bytes + next > maxBatchBytes) break;
    bytes += next;
    end++;
  }
  return end;
}

/** The orders in file order, `size` at a time (fewer where the request would pass `maxBatchBytes`). */
export function planBatches(orders: BulkOrder[], size: number, digest: string): PlannedBatch[] {
  const batches: PlannedBatch[] = [];
  for (let start = 0, end = 0; start < orders.length; start = end) {
    end = batchEnd(orders, start, size);
    const slice = orders.slice(start, end);
    const firstLine = slice[0]?.line ?? 0;
    const lastLine = slice[slice.length - 1]?.line ?? 0;
    batches.push({
      number: batches.length + 1,
      orders: slice,
      firstLine,
      lastLine,
      idempotencyKey: batchKey(digest, firstLine, lastLine),
    });
  }
  return batches;
}

/** Answers worth waiting for and asking again with the same key: the key is still being processed, or slow down. */
const retryable = new Set([409, 429, 503]);
const maxAttempts = 20;

function retryAfterMs(response: Response): number {
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 1000;
}

/**
 * Sends one batch under its key. `409 IDEMPOTENCY_IN_PROGRESS` (a run killed mid-request left it being
 * processed), `429` and `503` are retried after Retry-After with the same key: never a second batch.
 */
export async function sendBatch(client: VendClient, planned: PlannedBatch): Promise<SentBatch> {
  const body = { orders: planned.orders.map((o) => o.order) };
  const params = { header: { "Idempotency-Key": planned.idempotencyKey } };
  for (let attempt = 1; ; attempt++) {
    const { data, error, response } = await client.POST("/api/v1/vend/batches", { params, body });
    if (response.ok && data) {
      return { ...planned, batch: data.data, replayed: response.headers.get("idempotent-replayed") === "true" };
    }
    if (!retryable.has(response.status) || attempt >= maxAttempts) throw apiErrorOf(error, response);
    await Bun.sleep(retryAfterMs(response));
  }
}
