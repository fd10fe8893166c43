import type { CallOptions } from "../core/options.js";
import type { Requester } from "../core/requester.js";
import { listKeys, rollKey, updateKey } from "../generated/client/sdk.gen.js";
import type { ApiKey, ApiKeyRolled, ApiKeyRollRequest, ApiKeyUpdateRequest } from "../generated/client/types.gen.js";

/** The API keys of the calling key's account and mode. */
export class Keys {
  constructor(private readonly requester: Requester) {}

  /** Every key, oldest first; the calling key has `current: true`. */
  list(options: CallOptions = {}): Promise<ApiKey[]> {
    return this.requester.unwrap(listKeys({ ...this.requester.with(options) }));
  }

  /**
   * A new key replacing the calling one, which expires after `grace_seconds`. Not retried (a roll takes no
   * `Idempotency-Key`); rolling again after a lost answer is safe while the new key was never used.
   */
  roll(body: ApiKeyRollRequest = {}, options: CallOptions = {}): Promise<ApiKeyRolled> {
    return this.requester.unwrap(rollKey({ ...this.requester.with(options), body }));
  }

  /** Replaces a key's `allowed_ips` (`null`: any address). */
  setAllowList(id: string, body: ApiKeyUpdateRequest, options: CallOptions = {}): Promise<ApiKey> {
    return this.requester.unwrap(updateKey({ ...this.requester.with(options), path: { id }, body }));
  }
}
