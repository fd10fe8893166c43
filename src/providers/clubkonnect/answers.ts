import type { Unrecognised } from "../http.ts";
import { isRecord, readElectricityResult, readText } from "../readings.ts";
import type { ProviderFailureCode, ProviderNotFound, ProviderOutcome } from "../types.ts";

/** Words for an order ClubKonnect holds and has not settled (it retries on-hold orders itself). */
const heldWords = new Set(["ORDER_RECEIVED", "ORDER_PROCESSED", "ORDER_ONHOLD"]);
/** Words for an order ClubKonnect settled without delivering (and refunded). */
const undeliveredWords = new Set(["ORDER_CANCELLED", "ORDER_FAILED", "ORDER_ERROR"]);
/** Query words for an id ClubKonnect has no order under. */
const unknownOrderWords = new Set(["INVALID_REQUESTID", "INVALID_ORDERID", "ORDER_NOT_FOUND"]);
const credentialWords = new Set(["INVALID_CREDENTIALS", "MISSING_CREDENTIALS", "MISSING_USERID", "MISSING_APIKEY"]);
// ClubKonnect's completed-delivery code; it also reports ORDER_COMPLETED under others (201: network
// unresponsive, still being retried), which are not deliveries yet.
const deliveredCode = "200";

/**
 * Words with which an order is refused before anything is bought: INSUFFICIENT_BALANCE, INVALID_RECIPIENT,
 * MISSING_MOBILENETWORK, INVALID_DATAPLAN, MINIMUM_50, DATAPLAN_NOT_AVAILABLE…
 */
function isRefusal(word: string): boolean {
  return (
    word === "INSUFFICIENT_BALANCE" ||
    /^(INVALID|MISSING)_[A-Z0-9_]+$/.test(word) ||
    /^(MINIMUM|MAXIMUM)_[A-Z0-9_]+$/.test(word) ||
    /_NOT_AVAILABLE$/.test(word)
  );
}

/** Refusals of the number the order is for (phone, smartcard, meter). */
const destinationWords = new Set(["INVALID_RECIPIENT", "INVALID_MOBILENUMBER", "INVALID_SMARTCARDNO", "INVALID_METERNO"]);

/** The client's reason for a refusal: the destination, our float at ClubKonnect, or anything else. */
function refusalCode(word: string): ProviderFailureCode {
  if (destinationWords.has(word)) return "invalid_destination";
  return word === "INSUFFICIENT_BALANCE" ? "insufficient_provider_float" : "provider_refused";
}

interface Answer {
  word: string;
  code: string | undefined;
  orderId: string | undefined;
  remark: string | undefined;
  fields: Record<string, unknown>;
}

/** The status word (`status`, or `orderstatus` as in callbacks), code, order id and remark of an answer. */
function readAnswer(answer: unknown, reference: string): Answer | Unrecognised {
  if (!isRecord(answer)) return { status: "unrecognised", reason: "the answer is not a JSON object" };
  const word = (readText(answer, "status") ?? readText(answer, "orderstatus"))?.toUpperCase();
  if (!word) return { status: "unrecognised", reason: "the answer has no status" };
  const answeredFor = readText(answer, "requestid");
  if (answeredFor !== undefined && answeredFor !== reference) {
    return { status: "unrecognised", reason: `the answer is about request ${answeredFor}` };
  }
  return {
    word,
    code: readText(answer, "statuscode"),
    orderId: readText(answer, "orderid"),
    remark: (readText(answer, "remark") ?? readText(answer, "orderremark"))?.slice(0, 500),
    fields: answer,
  };
}

/**
 * Electricity values for the transaction's metadata. ClubKonnect puts the prepaid token in `metertoken`, as
 * text that may also spell out the units ("Token: 1234-… Units: 12.5kWh"); `units` and `receiptno` when it
 * sends them apart.
 */
function readResult(fields: Record<string, unknown>): Record<string, string> | undefined {
  const meterToken = readText(fields, "metertoken");
  return readElectricityResult({
    token: meterToken,
    purchased_code: meterToken,
    units: fields.units,
    receipt_number: fields.receiptno,
  });
}

/** The order's fate from a word ClubKonnect uses for orders it holds; undefined for any other word. */
function readOrderState(answer: Answer, reference: string): ProviderOutcome | undefined {
  const withOrderId = answer.orderId ? { providerReference: answer.orderId } : {};
  const describe = (fallback: string) => answer.remark ?? fallback;
  if (answer.word === "ORDER_COMPLETED") {
    if (answer.code !== undefined && answer.code !== deliveredCode) {
      return { status: "pending", ...withOrderId, message: describe(`ORDER_COMPLETED with status code ${answer.code}`) };
    }
    const result = readResult(answer.fields);
    return { status: "successful", providerReference: answer.orderId ?? reference, ...(result ? { result } : {}) };
  }
  if (heldWords.has(answer.word)) return { status: "pending", ...withOrderId, message: describe(answer.word) };
  if (undeliveredWords.has(answer.word)) {
    const message = describe(`ClubKonnect did not deliver the order: ${answer.word}`);
    return { status: "failed", ...withOrderId, message, failureCode: "not_delivered" };
  }
  return undefined;
}

/**
 * Reads the answer to an order (`APIAirtimeV1.asp` and its siblings). A refusal (a bad recipient, plan or
 * amount, too little balance, wrong credentials) means nothing was bought: failed. A repeated RequestID is
 * answered with the order ClubKonnect already holds; a duplicate word says the same without its state, so the
 * order's fate is still open: pending. Anything else is unrecognised.
 */
export function interpretOrderAnswer(raw: unknown, reference: string): ProviderOutcome | Unrecognised {
  const answer = readAnswer(raw, reference);
  if ("reason" in answer) return answer;
  const state = readOrderState(answer, reference);
  if (state) return state;
  if (answer.word.includes("DUPLICATE")) return { status: "pending", message: answer.remark ?? answer.word };
  if (isRefusal(answer.word)) {
    const message = answer.remark ?? `ClubKonnect refused the order: ${answer.word}`;
    return { status: "failed", message, failureCode: refusalCode(answer.word) };
  }
  return { status: "unrecognised", reason: `unexpected status ${answer.word}` };
}

/**
 * Reads the answer to `APIQueryV1.asp?RequestID=`. An id ClubKonnect has no order under → not found. A
 * refusal of the query itself (wrong credentials, a malformed id) says nothing about the order: unrecognised,
 * so its fate stays unknown.
 */
export function interpretQueryAnswer(raw: unknown, reference: string): ProviderOutcome | ProviderNotFound | Unrecognised {
  const answer = readAnswer(raw, reference);
  if ("reason" in answer) return answer;
  if (unknownOrderWords.has(answer.word)) return { status: "not_found" };
  const state = readOrderState(answer, reference);
  if (state) return state;
  const refused = credentialWords.has(answer.word) ? "refused our credentials" : "answered";
  return { status: "unrecognised", reason: `the query ${refused}: ${answer.word}` };
}
