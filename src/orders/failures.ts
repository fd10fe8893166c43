import { type FailureCode, failureCodes } from "../../generated/constants.ts";

/**
 * What a client reads of a failure, per code: the service's own words, safe to show an end customer. A
 * provider's message can carry its ids, URLs or internals, so it is never copied here (operators see it as
 * the transaction's `failure_reason` and on its provider attempts).
 */
const failureMessages: Readonly<Record<FailureCode, string>> = {
  provider_refused: "The provider declined this order. Nothing was charged.",
  invalid_destination:
    "The provider could not deliver to this phone, meter or smartcard number. Check the number; nothing was charged.",
  insufficient_provider_float: "The provider could not fill this order at the moment. Nothing was charged; try again later.",
  provider_unavailable: "No provider could take this order. Nothing was charged; try again later.",
  not_delivered: "The provider reported that this order was not delivered. Nothing was charged.",
  resolved_by_operator: "Support staff closed this order as failed. Nothing was charged.",
};

/** The metadata keys the service sets on a failed transaction (and only there). */
export const failureKeys = ["failure_code", "failure_message"] as const;

/** A failed transaction's `failure_code` and `failure_message`. */
export const failureMetadata = (code: FailureCode): Record<(typeof failureKeys)[number], string> => ({
  failure_code: code,
  failure_message: failureMessages[code],
});

export const isFailureCode = (value: string | undefined): value is FailureCode =>
  (failureCodes as readonly (string | undefined)[]).includes(value);
