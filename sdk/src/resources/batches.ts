import type { CallOptions, IdempotentCallOptions, ListParams } from "../core/options.js";
import { PageList } from "../core/paging.js";
import { idempotencyKey, type Requester } from "../core/requester.js";
import { createVendBatch, getVendBatch, listVendBatches } from "../generated/client/sdk.gen.js";
import type {
  GetVendBatchData,
  ListVendBatchesData,
  Transaction,
  VendBatch,
  VendBatchDetail,
  VendBatchRequest,
} from "../generated/client/types.gen.js";

/** Bulk vends: up to 1,000 orders in one request, each its own transaction. */
export class Batches {
  constructor(private readonly requester: Requester) {}

  /** Accepts the orders at once (`POST /api/v1/vend/batches`); read `counts` and `rejections`. */
  create(body: VendBatchRequest, options: IdempotentCallOptions = {}): Promise<VendBatch> {
    const { idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      createVendBatch({ ...this.requester.with(call), body, headers: { "Idempotency-Key": idempotencyKey(key) } }),
    );
  }

  /** The batches, newest first, every page. */
  list(params: ListParams<ListVendBatchesData["query"]> = {}, options: CallOptions = {}): PageList<VendBatch> {
    return new PageList((cursor) =>
      this.requester.unwrap(listVendBatches({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }

  /** A batch with its counts as they stand and the first page of its orders. */
  get(id: string, params: GetVendBatchData["query"] = {}, options: CallOptions = {}): Promise<VendBatchDetail> {
    return this.requester.unwrap(getVendBatch({ ...this.requester.with(options), path: { id }, query: params }));
  }

  /** A batch's orders (its transactions), every page. */
  orders(id: string, params: ListParams<GetVendBatchData["query"]> = {}, options: CallOptions = {}): PageList<Transaction> {
    return new PageList(async (cursor) => {
      const detail = await this.get(id, { ...params, cursor }, options);
      return detail.orders;
    });
  }
}
