import type { Unrecognised } from "../http.ts";
import { isRecord, readElectricityResult, readText } from "../readings.ts";
import type { ProviderFailureCode, ProviderNotFound, ProviderOutcome } from "../types.ts";

/** Pay answers that mean the order was refused and will never be carried out. */
const payRefusalCodes = new Set([
  "010", // variation code does not exist
  "011", // invalid arguments
  "012", // product does not exist
  "013", // below minimum amount
  "015", // invalid request id
  "016", // transaction failed
  "017", // above maximum amount
  "018", // low wallet balance
  "019", // likely duplicate transaction
  "021", // account locked
  "022", // account suspended
  "023", // API access not enabled
  "024", // account inactive
  "027", // IP not whitelisted
  "028", // product not whitelisted
  "030", // biller not reachable
  "031", // below minimum quantity
  "032", // above maximum quantity
  "034", // service suspended
  "035", // service inactive
  "040", // transaction reversal
  "085", // improper request id
  "087", // invalid credentials
  "091", // transaction not processed
]);

// On requery most refusal codes (credentials, IP, arguments) say nothing about the order itself.
const requeryFailureCodes = new Set(["016", "040", "091"]);
const processingCode = "099";
const lowBalanceCode = "018";
// Pay with a request id VTpass already holds: its fate is whatever the first attempt became.
const duplicateRequestCode = "014";
const unknownRequestCode = "015";

export type Interpretation = ProviderOutcome | ProviderNotFound | Unrecognised;

export function readCode(answer: Record<string, unknown>): string | undefined {
  const code = answer.code;
  if (typeof code === "string" && /^\d{1,3}$/.test(code.trim())) return code.trim().padStart(3, "0");
  if (typeof code === "number" && Number.isInteger(code) && code >= 0 && code < 1000) return String(code).padStart(3, "0");
  return undefined;
}

function readTransaction(answer: Record<string, unknown>): Record<string, unknown> | undefined {
  const content = answer.content;
  return isRecord(content) && isRecord(content.transactions) ? content.transactions : undefined;
}

/**
 * Reads a pay, requery or callback answer (VTpass shape). `code` "000" defers to
 * `content.transactions.status`: delivered → successful; initiated/pending → pending; failed/reversed →
 * failed. "099" (and "014" on pay) → pending; refusal codes → failed; "015" on requery → not found.
 * A pay refusal is `provider_refused` (018, our low balance there: `insufficient_provider_float`); a failure
 * VTpass reports after taking the order (status failed/reversed, or 016/040/091 on requery) is `not_delivered`.
 * Anything else is unrecognised: the caller treats the provider as unavailable.
 */
export function interpretAnswer(answer: unknown, kind: "pay" | "requery", reference: string): Interpretation {
  if (!isRecord(answer)) return { status: "unrecognised", reason: "the answer is not a JSON object" };
  const code = readCode(answer);
  if (!code) return { status: "unrecognised", reason: "the answer has no code" };
  const answeredFor = readText(answer, "requestId");
  if (answeredFor !== undefined && answeredFor !== reference) {
    return { status: "unrecognised", reason: `the answer is about request ${answeredFor}` };
  }
  const description = readText(answer, "response_description")?.slice(0, 500);
  const transaction = readTransaction(answer);
  const transactionId = transaction && readText(transaction, "transactionId");
  const withTransactionId = transactionId ? { providerReference: transactionId } : {};
  const failed = (failureCode: ProviderFailureCode): ProviderOutcome => ({
    status: "failed",
    ...withTransactionId,
    message: description ?? `VTU code ${code}`,
    failureCode,
  });
  const pending = (): ProviderOutcome => ({
    status: "pending",
    ...withTransactionId,
    ...(description ? { message: description } : {}),
  });

  if (kind === "requery" && code === unknownRequestCode) return { status: "not_found" };
  if (kind === "pay" && payRefusalCodes.has(code))
    return failed(code === lowBalanceCode ? "insufficient_provider_float" : "provider_refused");
  if (kind === "requery" && requeryFailureCodes.has(code)) return failed("not_delivered");
  if (code === processingCode || (kind === "pay" && code === duplicateRequestCode)) return pending();
  if (code !== "000") {
    return { status: "unrecognised", reason: `unexpected code ${code}${description ? ` (${description})` : ""}` };
  }
  if (!transaction) return { status: "unrecognised", reason: "code 000 without content.transactions" };

  const status = readText(transaction, "status")?.toLowerCase();
  if (status === "delivered") {
    const result = readElectricityResult(answer);
    return { status: "successful", providerReference: transactionId ?? reference, ...(result ? { result } : {}) };
  }
  if (status === "failed" || status === "reversed") return failed("not_delivered");
  // "initiated", "pending" or a status we do not know: VTpass holds the order, its fate is still open.
  return pending();
}
