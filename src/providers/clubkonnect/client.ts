import { nairaToKobo } from "../../lib/shared/money.ts";
import {
  type CustomerInfo,
  type CustomerQuery,
  type ProviderAdapter,
  type ProviderNotFound,
  type ProviderOrder,
  type ProviderOutcome,
  ProviderUnavailableError,
} from "../types.ts";
import { isRecord, readText } from "../vtu/mapping.ts";
import { interpretOrderAnswer, interpretQueryAnswer, type Unrecognised } from "./answers.ts";
import type { ClubkonnectConfig } from "./config.ts";
import { planClubkonnectOrder, planClubkonnectVerify } from "./mapping.ts";

type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface ClubkonnectProviderOptions {
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Phone sent for electricity and cable orders that carry none (ClubKonnect requires one). */
  defaultPhone?: string;
}

export const clubkonnectName = "clubkonnect";

/** Verification names for a meter or smartcard ClubKonnect does not know. */
const unknownCustomerWords = /^INVALID_(METERNO|SMARTCARDNO|CUSTOMERID|ACCOUNTNO)$/;

interface Answered {
  httpStatus: number;
  body: unknown;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message || error.name;
  return String(error);
}

/** Naira as ClubKonnect writes it ("3651.449", "1,250.00") → whole kobo; undefined when it is not an amount. */
/**
 * The live provider adapter modelled on ClubKonnect (Nellobyte Systems): GETs to `API*.asp` with `UserID` and
 * `APIKey` in the query string, orders by RequestID (our reference), `APIQueryV1.asp` to re-query,
 * `APIVerify*` to look up customers, `APIWalletBalanceV1.asp` for our float.
 */
export function createClubkonnectProvider(config: ClubkonnectConfig, options: ClubkonnectProviderOptions = {}): ProviderAdapter {
  // The key travels in the URL, so a transport error may quote it, raw or encoded: never let it into a message.
  const keyForms = [config.apiKey, new URLSearchParams({ k: config.apiKey }).toString().slice(2)];
  const redact = (text: string) => keyForms.reduce((redacted, form) => redacted.replaceAll(form, "***"), text);
  const unavailable = (message: string, answered: boolean) =>
    new ProviderUnavailableError(clubkonnectName, redact(message), answered);

  async function get(endpoint: string, params: Record<string, string>): Promise<Answered> {
    const send: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));
    const url = new URL(`${config.baseUrl}/${endpoint}`);
    for (const [name, value] of Object.entries({ UserID: config.userId, APIKey: config.apiKey, ...params })) {
      url.searchParams.set(name, value);
    }
    let response: Response;
    let text: string;
    try {
      response = await send(url.href, {
        method: "GET",
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const reason = describeError(error);
      const what = reason === "timed out" ? `timed out after ${config.timeoutMs} ms` : `failed: ${reason}`;
      throw unavailable(`${endpoint} ${what}`, false);
    }
    if (response.status < 200 || response.status >= 500 || (response.status >= 300 && response.status < 400)) {
      throw unavailable(`${endpoint} answered HTTP ${response.status}`, true);
    }
    try {
      return { httpStatus: response.status, body: JSON.parse(text) as unknown };
    } catch {
      throw unavailable(`${endpoint} answered HTTP ${response.status} with a body that is not JSON`, true);
    }
  }

  function settle<T extends ProviderOutcome | ProviderNotFound>(
    endpoint: string,
    answered: Answered,
    answer: T | Unrecognised,
  ): T {
    if (answer.status === "unrecognised")
      throw unavailable(`${endpoint} answered HTTP ${answered.httpStatus}: ${answer.reason}`, true);
    // A 4xx is believed only when it says the order failed or is unknown.
    if (answered.httpStatus >= 400 && answer.status !== "failed" && answer.status !== "not_found") {
      throw unavailable(`${endpoint} answered HTTP ${answered.httpStatus}`, true);
    }
    return answer;
  }

  function readCustomer(endpoint: string, answered: Answered): CustomerInfo | null {
    const body = isRecord(answered.body) ? answered.body : {};
    const name = readText(body, "customer_name");
    const word = (name ?? readText(body, "status"))?.toUpperCase();
    if (word && unknownCustomerWords.test(word)) return null;
    if (answered.httpStatus >= 400 || !name) {
      throw unavailable(`${endpoint} answered HTTP ${answered.httpStatus} with ${word ?? "no customer"}`, true);
    }
    return { customerName: name, address: readText(body, "address") ?? null };
  }

  return {
    name: clubkonnectName,

    async vend(order: ProviderOrder): Promise<ProviderOutcome> {
      const plan = planClubkonnectOrder(order, options.defaultPhone);
      if (plan.kind === "unsold") return { status: "failed", message: plan.message };
      const { endpoint, params } = plan.request;
      const callback: Record<string, string> = config.callbackUrl ? { CallBackURL: config.callbackUrl } : {};
      const answered = await get(endpoint, { ...params, ...callback });
      return settle(endpoint, answered, interpretOrderAnswer(answered.body, order.reference));
    },

    async requery(order: ProviderOrder): Promise<ProviderOutcome | ProviderNotFound> {
      const endpoint = "APIQueryV1.asp";
      const answered = await get(endpoint, { RequestID: order.reference });
      return settle(endpoint, answered, interpretQueryAnswer(answered.body, order.reference));
    },

    async verifyCustomer(query: CustomerQuery): Promise<CustomerInfo | null> {
      const plan = planClubkonnectVerify(query);
      if (!plan) return null;
      return readCustomer(plan.endpoint, await get(plan.endpoint, plan.params));
    },

    async balance(): Promise<number> {
      const endpoint = "APIWalletBalanceV1.asp";
      const answered = await get(endpoint, {});
      const body = answered.body;
      const kobo = isRecord(body) ? nairaToKobo(body.balance) : undefined;
      if (answered.httpStatus >= 400 || kobo === undefined) {
        const word = isRecord(body) ? readText(body, "status") : undefined;
        throw unavailable(`${endpoint} answered HTTP ${answered.httpStatus} with ${word ?? "no balance"}`, true);
      }
      return kobo;
    },
  };
}
