import type { CallOptions } from "../core/options.js";
import type { Requester } from "../core/requester.js";
import { verifyMeter, verifySmartcard } from "../generated/client/sdk.gen.js";
import type {
  MeterVerification,
  MeterVerifyRequest,
  SmartcardVerification,
  SmartcardVerifyRequest,
} from "../generated/client/types.gen.js";

/** The customer behind a meter or smartcard, before paying. Nothing is charged. */
export class Verification {
  constructor(private readonly requester: Requester) {}

  meter(body: MeterVerifyRequest, options: CallOptions = {}): Promise<MeterVerification> {
    return this.requester.unwrap(verifyMeter({ ...this.requester.with(options), body }));
  }

  smartcard(body: SmartcardVerifyRequest, options: CallOptions = {}): Promise<SmartcardVerification> {
    return this.requester.unwrap(verifySmartcard({ ...this.requester.with(options), body }));
  }
}
