import { type IdempotentCallOptions, type WaitOptions, waitQuery } from "../core/options.js";
import { idempotencyKey, type Requester, waitingCall } from "../core/requester.js";
import { vendCable, vendElectricity, vendProduct } from "../generated/client/sdk.gen.js";
import type { CableVendRequest, ElectricityVendRequest, Transaction, VendRequest } from "../generated/client/types.gen.js";

export interface VendOptions extends IdempotentCallOptions, WaitOptions {}

/**
 * Single vends. Each is accepted at once (`status: "queued"`) and processed in the background; with `wait` the
 * answer comes when the transaction is final or the wait ends, so read `status`. Every call carries an
 * `Idempotency-Key` (see `idempotencyKey`), so it is retried safely.
 */
export class Vends {
  constructor(private readonly requester: Requester) {}

  /** Airtime or a data bundle by product code (`POST /api/v1/vend`). */
  create(body: VendRequest, options: VendOptions = {}): Promise<Transaction> {
    const { wait, idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      vendProduct({
        ...this.requester.with(waitingCall(call, wait)),
        body,
        query: waitQuery(wait),
        headers: { "Idempotency-Key": idempotencyKey(key) },
      }),
    );
  }

  /** Electricity for a prepaid or postpaid meter (`POST /api/v1/bills/electricity`); the token arrives in `metadata`. */
  electricity(body: ElectricityVendRequest, options: VendOptions = {}): Promise<Transaction> {
    const { wait, idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      vendElectricity({
        ...this.requester.with(waitingCall(call, wait)),
        body,
        query: waitQuery(wait),
        headers: { "Idempotency-Key": idempotencyKey(key) },
      }),
    );
  }

  /** A cable TV bouquet (`POST /api/v1/bills/cable`). */
  cable(body: CableVendRequest, options: VendOptions = {}): Promise<Transaction> {
    const { wait, idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      vendCable({
        ...this.requester.with(waitingCall(call, wait)),
        body,
        query: waitQuery(wait),
        headers: { "Idempotency-Key": idempotencyKey(key) },
      }),
    );
  }
}
