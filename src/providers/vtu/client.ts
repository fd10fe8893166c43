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
import { type Interpretation, interpretAnswer, readCode } from "./answers.ts";
import type { VtuConfig } from "./config.ts";
import { buildVtuPayRequest, buildVtuVerifyRequest, isRecord, readText } from "./mapping.ts";

type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface VtuProviderOptions {
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Phone sent for electricity and cable orders that carry none (VTpass requires one). */
  defaultPhone?: string;
}

export const vtuName = "vtu";

function describeError(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message || error.name;
  return String(error);
}

/** The live provider adapter, modelled on VTpass (`/api/pay`, `/api/requery`, `/api/merchant-verify`). */
export function createVtuProvider(config: VtuConfig, options: VtuProviderOptions = {}): ProviderAdapter {
  /** `answered`: an HTTP answer came back (VTpass is done with the request), as opposed to a timeout or a broken connection. */
  const unavailable = (message: string, answered = true) => new ProviderUnavailableError(vtuName, message, answered);

  /** POSTs `payload` (GET when there is none, as VTpass's balance wants) and reads the JSON answer. */
  async function post(path: string, payload?: object): Promise<{ httpStatus: number; body: unknown }> {
    const send: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));
    let response: Response;
    let text: string;
    try {
      response = await send(`${config.baseUrl}${path}`, {
        method: payload ? "POST" : "GET",
        headers: {
          "api-key": config.apiKey,
          "secret-key": config.secretKey,
          accept: "application/json",
          ...(payload ? { "content-type": "application/json" } : {}),
        },
        ...(payload ? { body: JSON.stringify(payload) } : {}),
        redirect: "manual",
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const reason = describeError(error);
      throw unavailable(
        `${path} ${reason === "timed out" ? `timed out after ${config.timeoutMs} ms` : `failed: ${reason}`}`,
        false,
      );
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
    name: vtuName,

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

    /** `GET /api/balance`: `{code: 1, contents: {balance}}`, in naira. */
    async balance(): Promise<number> {
      const { httpStatus, body } = await post("/api/balance");
      const contents = isRecord(body) && isRecord(body.contents) ? body.contents : undefined;
      const kobo = contents ? nairaToKobo(contents.balance) : undefined;
      if (httpStatus >= 400 || kobo === undefined)
        throw unavailable(`/api/balance answered HTTP ${httpStatus} without a balance`);
      return kobo;
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
