import { randomUUID } from "node:crypto";
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { ServiceCode } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst, withinRange } from "../db/keyset.ts";
import { type BatchRejection, vendBatches } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, type FieldError, firstOrNotFound } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import type { Scope } from "../lib/scope.ts";
import { acceptVends, type CoveredAcceptRequest } from "../orders/accept-vends.ts";
import {
  countsOf,
  emitBatchCompleted,
  presentVendBatch,
  readVendBatch,
  readVendBatches,
  type VendBatch,
} from "../orders/batch-completion.ts";
import { listTransactions } from "../orders/lookup.ts";
import { type ChooseRoute, type PriceOf, type ProductLookup, resolverFor, type VendOrder } from "./requests.ts";

type Schemas = components["schemas"];
type VendBatchOrder = Schemas["VendBatchOrder"];

/** Checks one order's fields (`service` removed) against the request schema of its single vend. */
export type OrderCheck = (service: ServiceCode, fields: Record<string, unknown>) => FieldError[];

/** One order of a batch as resolved: ready to accept, or refused as invalid (400). */
export type BatchItem = { index: number; order: VendOrder; provider: string } | { index: number; rejection: BatchRejection };

/** Orders accepted per accept statement: its running balance walks the orders one by one, so smaller is cheaper. */
const acceptChunk = 100;

const clientReferenceOf = (fields: Record<string, unknown>) =>
  typeof fields.client_reference === "string" ? fields.client_reference : null;

function invalid(index: number, fields: Record<string, unknown>, errors: FieldError[]): BatchItem {
  const prefix = `orders[${index}]`;
  const named = errors.map((e) => ({ field: e.field === "body" ? prefix : `${prefix}.${e.field}`, message: e.message }));
  return {
    index,
    rejection: {
      index,
      client_reference: clientReferenceOf(fields),
      status: 400,
      error: { code: "VALIDATION_FAILED", message: "Order validation failed", data: { errors: named } },
    },
  };
}

interface Resolution {
  lookup: ProductLookup;
  route: ChooseRoute;
  price: PriceOf;
  check: OrderCheck;
}

async function resolveOrder({ lookup, route, price, check }: Resolution, raw: VendBatchOrder, index: number) {
  const { service, ...fields } = raw as VendBatchOrder & Record<string, unknown>;
  const problems = check(service, fields);
  if (problems.length > 0) return invalid(index, fields, problems);
  try {
    const order = await resolverFor(service)(lookup, fields, route, price);
    if (order.product.service !== service) {
      return invalid(index, fields, [
        { field: "service", message: `does not match the product's service (${order.product.service})` },
      ]);
    }
    return { index, order, provider: order.metadata.route ?? route(order.product) };
  } catch (error) {
    if (error instanceof AppError && error.code === "VALIDATION_FAILED") {
      const errors = (error.data?.errors ?? []) as FieldError[];
      return invalid(index, fields, errors);
    }
    throw error;
  }
}

/**
 * Validates and resolves every order exactly as its single vend would (schema, catalogue, amounts), each
 * on its own: an invalid one becomes a 400 rejection naming `orders[i].field`. A product with no provider
 * to route to (live mode) throws 503 NO_ROUTE for the whole batch. Every order is priced by `price` (the
 * caller's plan).
 */
export function resolveBatchOrders(
  { lookup, route, price, check }: Resolution,
  orders: readonly VendBatchOrder[],
): Promise<BatchItem[]> {
  // Each product is looked up once for the whole batch (the shared cache does not join concurrent loads).
  const products = new Map<string, ReturnType<ProductLookup>>();
  const once: ProductLookup = (code) => {
    let product = products.get(code);
    if (!product) {
      product = lookup(code);
      products.set(code, product);
    }
    return product;
  };
  return Promise.all(orders.map((raw, index) => resolveOrder({ lookup: once, route, price, check }, raw, index)));
}

export interface BatchAcceptance {
  batch: VendBatch;
  /** The orders that became transactions. */
  accepted: VendOrder[];
}

/**
 * Accepts a resolved batch on `tx` (the transaction that holds the batch's Idempotency-Key and records its
 * answer): the valid orders in index order through the same accept statement as single vends, each with its
 * own hold, `queued` transaction, `batch_id` and ledger entry, refused (402) when the wallet's available
 * balance does not cover it when its turn comes; then the batch row with every rejection. A batch with no
 * accepted order is complete at once, its `batch.completed` event recorded here.
 */
export async function acceptVendBatch(
  tx: Executor,
  request: { wallet: Scope; items: readonly BatchItem[]; traceContext?: string },
): Promise<BatchAcceptance> {
  const { wallet, items } = request;
  const id = randomUUID();
  const rejections: BatchRejection[] = [];
  const accepted: VendOrder[] = [];
  const valid: { index: number; accept: CoveredAcceptRequest }[] = [];
  for (const item of items) {
    if ("rejection" in item) {
      rejections.push(item.rejection);
      continue;
    }
    const order = { ...item.order, metadata: { ...item.order.metadata, batch_id: id } };
    valid.push({
      index: item.index,
      accept: {
        wallet,
        key: null,
        batchId: id,
        fingerprint: "",
        order,
        provider: item.provider,
        traceContext: request.traceContext,
        render: () => "",
      },
    });
  }
  for (let start = 0; start < valid.length; start += acceptChunk) {
    const chunk = valid.slice(start, start + acceptChunk);
    const outcomes = await acceptVends(
      tx,
      chunk.map((v) => v.accept),
    );
    outcomes.forEach((outcome, n) => {
      const { index, accept } = chunk[n] as (typeof chunk)[number];
      if (!(outcome instanceof AppError)) {
        accepted.push(accept.order);
        return;
      }
      if (outcome.code !== "WALLET_INSUFFICIENT_FUNDS") throw outcome;
      rejections.push({
        index,
        client_reference: accept.order.clientReference,
        status: 402,
        error: { code: outcome.code, message: outcome.message, data: null },
      });
    });
  }
  rejections.sort((a, b) => a.index - b.index);
  const [row] = await tx
    .insert(vendBatches)
    .values({
      id,
      accountId: wallet.accountId,
      mode: wallet.mode,
      orderCount: items.length,
      rejections,
      completedAt: accepted.length === 0 ? sql`now()` : null,
    })
    .returning();
  if (!row) throw new Error("the batch row was not written");
  const batch = presentVendBatch(row, countsOf({ queued: accepted.length }, rejections));
  if (accepted.length === 0) await emitBatchCompleted(tx, batch, wallet.accountId);
  return { batch, accepted };
}

/** The scope's batch with its counts as they stand and a page of its orders; 404 for another scope's. */
export async function getVendBatch(
  db: Executor,
  cursors: CursorCodec,
  scope: Scope,
  id: string,
  query: { cursor?: string; limit?: number },
): Promise<{ batch: VendBatch; orders: Awaited<ReturnType<typeof listTransactions>> }> {
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
export function listVendBatches(
  db: Executor,
  cursors: CursorCodec,
  scope: Scope,
  query: ListVendBatchesQuery,
): Promise<Page<VendBatch>> {
  const range = withinRange(vendBatches.createdAt, query);
  const completed = query.completed;
  const conditions = [
    eq(vendBatches.accountId, scope.accountId),
    eq(vendBatches.mode, scope.mode),
    ...range.conditions,
    completed === undefined ? undefined : completed ? isNotNull(vendBatches.completedAt) : isNull(vendBatches.completedAt),
  ];
  const filters = { ...range.bound, completed: completed === undefined ? undefined : String(completed) };
  const request = { cursors, scope: `vend-batches:${scope.accountId}:${scope.mode}`, filters, query, conditions };
  return readNewestFirst(db, vendBatches, "createdAt", request, (rows) => readVendBatches(db, rows));
}
