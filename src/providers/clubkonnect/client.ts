import { nairaToKobo } from "../../lib/shared/money.ts";
import { believe, type FetchFunction, fetchJson, type JsonAnswer, type ProviderHttp, unavailable } from "../http.ts";
import { isRecord, readText } from "../readings.ts";
import type { CustomerInfo, ProviderAdapter } from "../types.ts";
import { interpretOrderAnswer, interpretQueryAnswer } from "./answers.ts";
import type { ClubkonnectConfig } from "./config.ts";
import { planClubkonnectOrder, planClubkonnectVerify } from "./mapping.ts";
import { readClubkonnectDataPlans } from "./plans.ts";

export interface ClubkonnectProviderOptions {
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Phone sent for electricity and cable orders that carry none (ClubKonnect requires one). */
  defaultPhone?: string;
}

export const clubkonnectName = "clubkonnect";

/** Verification names for a meter or smartcard ClubKonnect does not know. */
const unknownCustomerWords = /^INVALID_(METERNO|SMARTCARDNO|CUSTOMERID|ACCOUNTNO)$/;

/**
 * The live provider adapter modelled on ClubKonnect (Nellobyte Systems): GETs to `API*.asp` with `UserID` and
 * `APIKey` in the query string, orders by RequestID (our reference), `APIQueryV1.asp` to re-query,
 * `APIVerify*` to look up customers, `APIWalletBalanceV1.asp` for our float.
 */
export function createClubkonnectProvider(config: ClubkonnectConfig, options: ClubkonnectProviderOptions = {}): ProviderAdapter {
  // The key travels in the URL, so a transport error may quote it, raw or encoded: never let it into a message.
  const keyForms = [config.apiKey, new URLSearchParams({ k: config.apiKey }).toString().slice(2)];
  const redact = (text: string) => keyForms.reduce((redacted, form) => redacted.replaceAll(form, "***"), text);
  const http: ProviderHttp = { provider: clubkonnectName, timeoutMs: config.timeoutMs, fetch: options.fetch, redact };

  function get(endpoint: string, params: Record<string, string>): Promise<JsonAnswer> {
    const url = new URL(`${config.baseUrl}/${endpoint}`);
    for (const [name, value] of Object.entries({ UserID: config.userId, APIKey: config.apiKey, ...params })) {
      url.searchParams.set(name, value);
    }
    return fetchJson(http, endpoint, url.href, { method: "GET", headers: { accept: "application/json" } });
  }

  function readCustomer(endpoint: string, answered: JsonAnswer): CustomerInfo | null {
    const body = isRecord(answered.body) ? answered.body : {};
    const name = readText(body, "customer_name");
    const word = (name ?? readText(body, "status"))?.toUpperCase();
    if (word && unknownCustomerWords.test(word)) return null;
    if (answered.httpStatus >= 400 || !name) {
      throw unavailable(http, `${endpoint} answered HTTP ${answered.httpStatus} with ${word ?? "no customer"}`, true);
    }
    return { customerName: name, address: readText(body, "address") ?? null };
  }

  return {
    name: clubkonnectName,

    async vend(order) {
      const plan = planClubkonnectOrder(order, options.defaultPhone);
      if (plan.kind === "unsold") return { status: "failed", message: plan.message };
      const { endpoint, params } = plan.request;
      const callback: Record<string, string> = config.callbackUrl ? { CallBackURL: config.callbackUrl } : {};
      const answered = await get(endpoint, { ...params, ...callback });
      return believe(http, endpoint, answered, interpretOrderAnswer(answered.body, order.reference));
    },

    async requery(order) {
      const endpoint = "APIQueryV1.asp";
      const answered = await get(endpoint, { RequestID: order.reference });
      return believe(http, endpoint, answered, interpretQueryAnswer(answered.body, order.reference));
    },

    async verifyCustomer(query) {
      const plan = planClubkonnectVerify(query);
      if (!plan) return null;
      return readCustomer(plan.endpoint, await get(plan.endpoint, plan.params));
    },

    /** The data plan list (data only: its bouquets are not listed here). */
    async listPlans() {
      const endpoint = "APIDatabundlePlansV2.asp";
      const answered = await get(endpoint, {});
      const plans = answered.httpStatus >= 400 ? `HTTP ${answered.httpStatus}` : readClubkonnectDataPlans(answered.body);
      if (typeof plans === "string") throw unavailable(http, `${endpoint} answered ${plans}`, true);
      return { services: ["data"], plans };
    },

    async balance() {
      const endpoint = "APIWalletBalanceV1.asp";
      const answered = await get(endpoint, {});
      const body = answered.body;
      const kobo = isRecord(body) ? nairaToKobo(body.balance) : undefined;
      if (answered.httpStatus >= 400 || kobo === undefined) {
        const word = isRecord(body) ? readText(body, "status") : undefined;
        throw unavailable(http, `${endpoint} answered HTTP ${answered.httpStatus} with ${word ?? "no balance"}`, true);
      }
      return kobo;
    },
  };
}
