import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { readNewestFirst, withinRange } from "../db/keyset.ts";
import { vendBatches } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { firstOrNotFound } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import type { Scope } from "../lib/scope.ts";
import { readVendBatch, readVendBatches, type VendBatch } from "./batch-completion.ts";
import { listTransactions } from "./lookup.ts";

/** What reading batches runs on: the database, and the codec of its pages' cursors. */
export interface BatchReadContext {
  db: Executor;
  cursors: CursorCodec;
}

export interface GetVendBatchInput {
  scope: Scope;
  id: string;
  /** The page of its orders. */
  query: { cursor?: string; limit?: number };
}

/** The scope's batch with its counts as they stand and a page of its orders; 404 for another scope's. */
export async function getVendBatch({
  ctx,
  input,
}: {
  ctx: BatchReadContext;
  input: GetVendBatchInput;
}): Promise<{ batch: VendBatch; orders: Awaited<ReturnType<typeof listTransactions>> }> {
  const { db, cursors } = ctx;
  const { scope, id, query } = input;
  const inScope = and(eq(vendBatches.id, id), eq(vendBatches.accountId, scope.accountId), eq(vendBatches.mode, scope.mode));
  const row = await firstOrNotFound(db.select().from(vendBatches).where(inScope).limit(1), "Batch");
  const orders = await listTransactions(db, cursors, scope, { batch_id: id, cursor: query.cursor, limit: query.limit });
  return { batch: await readVendBatch(db, row), orders };
}

export interface ListVendBatchesQuery {
  /** RFC 3339, inclusive, on `created_at`. */
  from?: string;
  /** RFC 3339, inclusive, on `created_at`. */
  to?: string;
  /** true: only complete batches; false: only open ones; undefined: both. */
  completed?: boolean;
  cursor?: string;
  limit?: number;
}

/**
 * One page of the scope's batches, newest first by `(created_at, id)` (the listing index), each with its
 * counts as they stand (one counting query for the whole page); cursors bound to the scope and filters.
 */
export function listVendBatches({
  ctx,
  input: { scope, query },
}: {
  ctx: BatchReadContext;
  input: { scope: Scope; query: ListVendBatchesQuery };
}): Promise<Page<VendBatch>> {
  const range = withinRange(vendBatches.createdAt, query);
  const completed = query.completed;
  const conditions = [
    eq(vendBatches.accountId, scope.accountId),
    eq(vendBatches.mode, scope.mode),
    ...range.conditions,
    completed === undefined ? undefined : completed ? isNotNull(vendBatches.completedAt) : isNull(vendBatches.completedAt),
  ];
  const filters = { ...range.bound, completed: completed === undefined ? undefined : String(completed) };
  const request = { cursors: ctx.cursors, scope: `vend-batches:${scope.accountId}:${scope.mode}`, filters, query, conditions };
  return readNewestFirst(ctx.db, vendBatches, "createdAt", request, (rows) => readVendBatches(ctx.db, rows));
}
