import { nairaToKobo } from "../../lib/shared/money.ts";
import { believe, type FetchFunction, fetchJson, type JsonAnswer, type ProviderHttp, unavailable } from "../http.ts";
import { isRecord, readText } from "../readings.ts";
import type { ProviderAdapter, ProviderPlan } from "../types.ts";
import { interpretAnswer, readCode } from "./answers.ts";
import type { VtuConfig } from "./config.ts";
import { buildVtuPayRequest, buildVtuVerifyRequest, vtuPlanSources } from "./mapping.ts";
import { readVtuVariations } from "./plans.ts";

export interface VtuProviderOptions {
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Phone sent for electricity and cable orders that carry none (VTpass requires one). */
  defaultPhone?: string;
}

export const vtuName = "vtu";

/** The live provider adapter, modelled on VTpass (`/api/pay`, `/api/requery`, `/api/merchant-verify`, `/api/balance`). */
export function createVtuProvider(config: VtuConfig, options: VtuProviderOptions = {}): ProviderAdapter {
  const http: ProviderHttp = { provider: vtuName, timeoutMs: config.timeoutMs, fetch: options.fetch };

  /** POSTs `payload` (GET when there is none, as VTpass's balance wants) and reads the JSON answer. */
  function post(path: string, payload?: object, query = ""): Promise<JsonAnswer> {
    return fetchJson(http, path, `${config.baseUrl}${path}${query}`, {
      method: payload ? "POST" : "GET",
      headers: {
        "api-key": config.apiKey,
        "secret-key": config.secretKey,
        accept: "application/json",
        ...(payload ? { "content-type": "application/json" } : {}),
      },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    });
  }

  return {
    name: vtuName,

    async vend(order) {
      const request = buildVtuPayRequest(order, options.defaultPhone);
      if (!request) return { status: "failed", message: `VTU sells no ${order.service} for ${order.network}` };
      const answered = await post("/api/pay", request);
      const outcome = believe(http, "/api/pay", answered, interpretAnswer(answered.body, "pay", order.reference));
      // interpretAnswer never answers not_found for a pay; kept total for the type.
      return outcome.status === "not_found" ? { status: "failed", message: "VTU does not know the request" } : outcome;
    },

    async requery(order) {
      const answered = await post("/api/requery", { request_id: order.reference });
      return believe(http, "/api/requery", answered, interpretAnswer(answered.body, "requery", order.reference));
    },

    /** `GET /api/balance`: `{code: 1, contents: {balance}}`, in naira. */
    async balance() {
      const { httpStatus, body } = await post("/api/balance");
      const contents = isRecord(body) && isRecord(body.contents) ? body.contents : undefined;
      const kobo = contents ? nairaToKobo(contents.balance) : undefined;
      if (httpStatus >= 400 || kobo === undefined)
        throw unavailable(http, `/api/balance answered HTTP ${httpStatus} without a balance`, true);
      return kobo;
    },

    /** Every `service-variations` list with fixed-price plans (data per network, cable bouquets), one GET each. */
    async listPlans() {
      const path = "/api/service-variations";
      const sources = vtuPlanSources();
      const lists = await Promise.all(
        sources.map(async (source): Promise<ProviderPlan[]> => {
          const { httpStatus, body } = await post(path, undefined, `?${new URLSearchParams({ serviceID: source.serviceID })}`);
          const plans = httpStatus >= 400 ? `HTTP ${httpStatus}` : readVtuVariations(body, source);
          if (typeof plans === "string") throw unavailable(http, `${path}?serviceID=${source.serviceID} answered ${plans}`, true);
          return plans;
        }),
      );
      return { services: [...new Set(sources.map((s) => s.service))], plans: lists.flat() };
    },

    async verifyCustomer(query) {
      const request = buildVtuVerifyRequest(query);
      if (!request) return null;
      const { httpStatus, body } = await post("/api/merchant-verify", request);
      const code = isRecord(body) ? readCode(body) : undefined;
      if (httpStatus >= 400 || !isRecord(body) || code !== "000" || !isRecord(body.content)) {
        throw unavailable(http, `/api/merchant-verify answered HTTP ${httpStatus} with code ${code ?? "none"}`, true);
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
