import type { Config } from "../config.ts";
import {
  type CustomerInfo,
  type CustomerQuery,
  type ProviderAdapter,
  type ProviderNotFound,
  type ProviderOrder,
  type ProviderOutcome,
  ProviderUnavailableError,
} from "./types.ts";
import { buildVtuPayRequest, buildVtuVerifyRequest, isRecord, readElectricityResult, readText } from "./vtu-mapping.ts";

export type VtuConfig = NonNullable<Config["vtu"]>;
type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface VtuProviderOptions {
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Phone sent for electricity and cable orders that carry none (VTpass requires one). */
  defaultPhone?: string;
}

const providerName = "vtu";

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
// Pay with a request id VTpass already holds: its fate is whatever the first attempt became.
const duplicateRequestCode = "014";
const unknownRequestCode = "015";

type Interpretation = ProviderOutcome | ProviderNotFound | { status: "unrecognised"; reason: string };

function readCode(answer: Record<string, unknown>): string | undefined {
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
 * Anything else is unrecognised: the caller treats the provider as unavailable.
 */
function interpretAnswer(answer: unknown, kind: "pay" | "requery", reference: string): Interpretation {
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
  const failed = (): ProviderOutcome => ({ status: "failed", ...withTransactionId, message: description ?? `VTU code ${code}` });
  const pending = (): ProviderOutcome => ({
    status: "pending",
    ...withTransactionId,
    ...(description ? { message: description } : {}),
  });

  if (kind === "requery" && code === unknownRequestCode) return { status: "not_found" };
  if ((kind === "pay" ? payRefusalCodes : requeryFailureCodes).has(code)) return failed();
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
  if (status === "failed" || status === "reversed") return failed();
  // "initiated", "pending" or a status we do not know: VTpass holds the order, its fate is still open.
  return pending();
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message || error.name;
  return String(error);
}

/** The live provider adapter, modelled on VTpass (`/api/pay`, `/api/requery`, `/api/merchant-verify`). */
export function createVtuProvider(config: VtuConfig, options: VtuProviderOptions = {}): ProviderAdapter {
  const unavailable = (message: string) => new ProviderUnavailableError(providerName, message);

  async function post(path: string, payload: object): Promise<{ httpStatus: number; body: unknown }> {
    const send: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));
    let response: Response;
    let text: string;
    try {
      response = await send(`${config.baseUrl}${path}`, {
        method: "POST",
        headers: {
          "api-key": config.apiKey,
          "secret-key": config.secretKey,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(payload),
        redirect: "manual",
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const reason = describeError(error);
      throw unavailable(`${path} ${reason === "timed out" ? `timed out after ${config.timeoutMs} ms` : `failed: ${reason}`}`);
    }
    if (response.status < 200 || response.status >= 500 || (response.status >= 300 && response.status < 400)) {
      throw unavailable(`${path} answered HTTP ${response.status}`);
    }
    try {
      return { httpStatus: response.status, body: JSON.parse(text) as unknown };
    } catch {
      throw unavailable(`${path} answered HTTP ${response.status} with a body that is not JSON`);
    }
  }

  function settle(path: string, httpStatus: number, answer: Interpretation): ProviderOutcome | ProviderNotFound {
    if (answer.status === "unrecognised") throw unavailable(`${path} answered HTTP ${httpStatus}: ${answer.reason}`);
    // A 4xx is believed only when it says the order failed or is unknown.
    if (httpStatus >= 400 && answer.status !== "failed" && answer.status !== "not_found") {
      throw unavailable(`${path} answered HTTP ${httpStatus}`);
    }
    return answer;
  }

  return {
    name: providerName,

    async vend(order: ProviderOrder): Promise<ProviderOutcome> {
      const request = buildVtuPayRequest(order, options.defaultPhone);
      if (!request) return { status: "failed", message: `VTU sells no ${order.service} for ${order.network}` };
      const { httpStatus, body } = await post("/api/pay", request);
      const outcome = settle("/api/pay", httpStatus, interpretAnswer(body, "pay", order.reference));
      // interpretAnswer never answers not_found for a pay; kept total for the type.
      return outcome.status === "not_found" ? { status: "failed", message: "VTU does not know the request" } : outcome;
    },

    async requery(order: ProviderOrder): Promise<ProviderOutcome | ProviderNotFound> {
      const { httpStatus, body } = await post("/api/requery", { request_id: order.reference });
      return settle("/api/requery", httpStatus, interpretAnswer(body, "requery", order.reference));
    },

    async verifyCustomer(query: CustomerQuery): Promise<CustomerInfo | null> {
      const request = buildVtuVerifyRequest(query);
      if (!request) return null;
      const { httpStatus, body } = await post("/api/merchant-verify", request);
      const code = isRecord(body) ? readCode(body) : undefined;
      if (httpStatus >= 400 || !isRecord(body) || code !== "000" || !isRecord(body.content)) {
        throw unavailable(`/api/merchant-verify answered HTTP ${httpStatus} with code ${code ?? "none"}`);
      }
      const content = body.content;
      const wrongCode = content.WrongBillersCode === true || content.WrongBillersCode === "true";
      const customerName = readText(content, "Customer_Name");
      if (wrongCode || readText(content, "error") !== undefined || !customerName) return null;
      return {
        customerName,
        address: readText(content, "Address") ?? null,
        currentBouquet: readText(content, "Current_Bouquet") ?? null,
        dueDate: readText(content, "Due_Date") ?? null,
      };
    },
  };
}

/** A VTU callback in the internal provider-callback format (DECISIONS 11). */
export interface VtuCallbackTranslation {
  event_id: string;
  reference: string;
  status: "successful" | "failed";
  provider_reference: string;
  token?: string;
  units?: string;
  receipt_number?: string;
  message?: string;
}

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
export function translateVtuCallback(body: unknown): VtuCallbackTranslation | null {
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
