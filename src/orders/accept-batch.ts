import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { type BatchRejection, vendBatches } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, type FieldError, successEnvelope } from "../errors.ts";
import { type IdempotencyKey, type IdempotentResult, runIdempotent } from "../idempotency/protocol.ts";
import type { Scope } from "../lib/scope.ts";
import { type AcceptContext, answerRefusal, pricer, productLookup, routeChooser } from "./accept-order.ts";
import { acceptVends, type CoveredAcceptRequest, type VendOrder } from "./accept-vends.ts";
import { countsOf, emitBatchCompleted, presentVendBatch, type VendBatch } from "./batch-completion.ts";
import { type ChooseRoute, type PriceOf, type ProductLookup, resolverFor } from "./vend-requests.ts";

type Schemas = components["schemas"];
type VendBatchOrder = Schemas["VendBatchOrder"];

/** One order of a batch as resolved: ready to accept, or refused as invalid (400). */
type BatchItem = { index: number; order: VendOrder; provider: string } | { index: number; rejection: BatchRejection };

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
}

async function resolveOrder({ lookup, route, price }: Resolution, raw: VendBatchOrder, index: number, problems: FieldError[]) {
  const { service, ...fields } = raw as VendBatchOrder & Record<string, unknown>;
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
 * Resolves every order exactly as its single vend would (catalogue, amounts), each on its own: an order with
 * `problems` (against its single vend's request schema), or found invalid here, becomes a 400 rejection naming
 * `orders[i].field`. A product with no provider to route to (live mode) throws 503 NO_ROUTE for the whole
 * batch. Every order is priced by `price` (the caller's plan).
 */
function resolveBatchOrders(
  { lookup, route, price }: Resolution,
  orders: readonly VendBatchOrder[],
  problems: readonly FieldError[][],
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
  const resolution = { lookup: once, route, price };
  return Promise.all(orders.map((raw, index) => resolveOrder(resolution, raw, index, problems[index] ?? [])));
}

interface BatchAcceptance {
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
async function createBatch(
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

const batchAcceptedMessage = "Batch accepted; each accepted order is processed on its own (see counts and rejections)";

/** A bulk order to accept. */
export interface BatchInput {
  /** The wallet that pays: the caller's account and mode. */
  wallet: Scope;
  key: IdempotencyKey;
  body: Schemas["VendBatchRequest"];
  /** Each order's problems against the request schema of its single vend, by index (none: valid). */
  problems: readonly FieldError[][];
  /** The W3C traceparent of the accepting request's span. */
  traceContext?: string;
}

/**
 * Accepts a bulk order: every order is resolved first (as its single vend), outside the database transaction;
 * then the whole batch is accepted in ONE database transaction with the record of its Idempotency-Key: the
 * batch row, every transaction, hold and ledger entry and the stored answer commit together or not at all.
 * Answers the answer stored under the key (fresh or replayed); the accepted orders are counted and the
 * workers told.
 */
export async function acceptBatch({ ctx, input }: { ctx: AcceptContext; input: BatchInput }): Promise<IdempotentResult> {
  const { wallet, key, body } = input;
  const route = routeChooser(ctx, wallet.mode);
  let items: BatchItem[];
  try {
    const price = await pricer(ctx, wallet.accountId);
    items = await resolveBatchOrders({ lookup: productLookup(ctx), route, price }, body.orders, input.problems);
  } catch (error) {
    // A whole-batch refusal (503 NO_ROUTE) replays a stored answer under the key, and stores nothing itself.
    return answerRefusal(ctx, key, body, error);
  }
  let accepted: VendOrder[] = [];
  const result = await runIdempotent(ctx.db, key, body, async (tx) => {
    const acceptance = await createBatch(tx, { wallet, items, traceContext: input.traceContext });
    accepted = acceptance.accepted;
    return { status: 202, body: JSON.stringify(successEnvelope(acceptance.batch, batchAcceptedMessage)) };
  });
  if (accepted.length > 0) {
    for (const order of accepted)
      ctx.metrics.vendAccepted({
        service: order.product.service,
        network: order.product.network,
        provider: order.metadata.route ?? route(order.product),
      });
    ctx.announceWork();
  }
  return result;
}
