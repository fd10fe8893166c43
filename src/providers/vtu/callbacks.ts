import { isRecord, readText } from "../readings.ts";
import type { CommonCallback } from "../types.ts";
import { interpretAnswer } from "./answers.ts";

/**
 * Translates a VTpass callback, `{type: "transaction-update", data: <a requery answer with requestId>}`:
 * - reference = data.requestId (our reference, sent as request_id);
 * - status: data read like a requery answer; delivered → successful, failed/reversed (or code 016/040/091)
 *   → failed. A reversal after delivery therefore arrives as a contradicting "failed" (409 upstream);
 * - provider_reference = content.transactions.transactionId, else the reference;
 * - token/units/receipt_number as for a delivered requery; message = response_description on failure;
 * - event_id = `vtu:<reference>:<status>`: VTpass sends no event id and repeats the same update, so
 *   repeats collapse into one event.
 * Anything else (other types, non-final states, malformed bodies) → null.
 */
export function translateVtuCallback(body: unknown): CommonCallback | null {
  if (!isRecord(body) || body.type !== "transaction-update" || !isRecord(body.data)) return null;
  const reference = readText(body.data, "requestId");
  if (!reference || reference.length > 64) return null;
  const outcome = interpretAnswer(body.data, "requery", reference);
  if (outcome.status !== "successful" && outcome.status !== "failed") return null;
  const providerReference = outcome.providerReference ?? reference;
  if (providerReference.length > 128) return null;
  const common = { event_id: `vtu:${reference}:${outcome.status}`, reference, provider_reference: providerReference };
  if (outcome.status === "failed") return { ...common, status: "failed", message: outcome.message };
  return { ...common, status: "successful", ...outcome.result };
}
