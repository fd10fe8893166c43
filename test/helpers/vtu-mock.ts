import { FetchInterceptor } from "@mswjs/interceptors/fetch";
import { type HttpHandler, HttpResponse, http } from "msw";
import { defineNetwork, InterceptorSource } from "msw/experimental";
import { isRecord } from "../../src/providers/readings.ts";
import type { VtuConfig } from "../../src/providers/vtu/config.ts";
import type { VtuPayRequest } from "../../src/providers/vtu/mapping.ts";
import { type FaultLooks, faultResponse, type ProviderFault } from "./provider-faults.ts";

/**
 * A scriptable VTpass-style provider for msw. A `VtuBook` remembers what pay did (including orders whose
 * answer was lost), so requery answers and callbacks agree with it:
 *
 *   const network = setupMockFetch({ onUnhandledFrame: "bypass" }); // "error" when nothing else is called
 *   beforeAll(() => network.enable()); afterEach(() => network.resetHandlers()); afterAll(() => network.disable());
 *   const book = new VtuBook();
 *   network.use(...vtuHandlers({ book, pay: { kind: "timeout", outcome: "delivered" } }));
 */

/**
 * msw over the global `fetch`, through @mswjs/interceptors' fetch interceptor alone: it replaces
 * `globalThis.fetch` itself, which is what Bun's native fetch goes through (`setupServer` from `msw/node` would
 * also patch Node's http modules, which nothing here uses).
 */
// InterceptorSource types its interceptors by their event map, which a concrete interceptor does not match
// (msw's own setupServer passes them untyped); same class at run time.
type SourceInterceptor = ConstructorParameters<typeof InterceptorSource>[0]["interceptors"][number];

export function setupMockFetch(options: { onUnhandledFrame?: "bypass" | "warn" | "error" } = {}) {
  return defineNetwork({
    sources: [new InterceptorSource({ interceptors: [new FetchInterceptor() as unknown as SourceInterceptor] })],
    handlers: [],
    onUnhandledFrame: options.onUnhandledFrame ?? "error",
    context: { quiet: true },
  });
}

export const vtuTestConfig: VtuConfig = {
  baseUrl: "https://vtu.provider.test",
  apiKey: "vtu-test-api-key",
  secretKey: "vtu-test-secret-key",
  callbackToken: "vtu-test-callback-token",
  callbackSecret: "vtu-test-callback-secret",
  timeoutMs: 1000,
};

export type VtuTransactionStatus = "delivered" | "initiated" | "pending" | "failed" | "reversed";

/** A pay as the mock receives it (the adapter's request; cable's `subscription_type` is not looked at). */
export type VtuPayBody = Omit<VtuPayRequest, "subscription_type">;

export interface VtuBookEntry extends VtuPayBody {
  transactionId: string;
  status: VtuTransactionStatus;
  /** Extra top-level answer fields: purchased_code, token, units, exchangeReference… */
  extras: Record<string, unknown>;
}

export interface VtuRecordedRequest {
  path: "pay" | "requery" | "merchant-verify" | "balance";
  headers: Record<string, string>;
  body: unknown;
}

/** What the provider really did with an order whose answer got lost. */
export type VtuHiddenOutcome = "delivered" | "failed" | "pending" | "not-received";

/** A broken answer: the client cannot tell what happened. */
export type VtuFault = ProviderFault | { kind: "wrong-shape" };

export type VtuPayScenario =
  | { kind: "deliver"; extras?: Record<string, unknown> }
  /** Code 099; the book holds it as pending until `book.settle`. */
  | { kind: "processing" }
  /** Code 000 with status "initiated"; pending in the book. */
  | { kind: "initiated" }
  /** Code 016, status "failed"; failed in the book. */
  | { kind: "fail"; description?: string }
  /** A refusal before anything happens (e.g. 018 LOW WALLET BALANCE); the book never hears of it. */
  | { kind: "refuse"; code: string; description: string; httpStatus?: number }
  | (VtuFault & { outcome: VtuHiddenOutcome });

const descriptions: Record<VtuTransactionStatus, string> = {
  delivered: "TRANSACTION SUCCESSFUL",
  initiated: "TRANSACTION PROCESSED",
  pending: "TRANSACTION PROCESSED",
  failed: "TRANSACTION FAILED",
  reversed: "TRANSACTION REVERSED",
};

function electricityExtras(serial: number): Record<string, unknown> {
  const digits = (12345678901234567890n + BigInt(serial)).toString();
  const token = digits.match(/\d{4}/g)?.join("-") ?? digits;
  return { purchased_code: `Token : ${token} Units: 12.5kWh`, exchangeReference: `RCPT${100000 + serial}` };
}

export class VtuBook {
  readonly transactions = new Map<string, VtuBookEntry>();
  readonly requests: VtuRecordedRequest[] = [];
  /** Our float at VTpass, answered by `GET /api/balance` in naira. */
  balanceKobo = 5_000_000;
  private readonly customers = new Map<string, Record<string, unknown>>();
  private serial = 0;

  record(body: VtuPayBody, status: VtuTransactionStatus, extras?: Record<string, unknown>): VtuBookEntry {
    this.serial += 1;
    const defaults = status === "delivered" && body.serviceID.endsWith("-electric") ? electricityExtras(this.serial) : {};
    const entry = { ...body, transactionId: `1700${String(this.serial).padStart(12, "0")}`, status, extras: extras ?? defaults };
    this.transactions.set(body.request_id, entry);
    return entry;
  }

  /** Moves a held order on (e.g. pending → delivered), as the provider would before its callback. */
  settle(requestId: string, status: VtuTransactionStatus, extras?: Record<string, unknown>): VtuBookEntry {
    const entry = this.transactions.get(requestId);
    if (!entry) throw new Error(`the VTU book holds no ${requestId}`);
    const defaults = status === "delivered" && entry.serviceID.endsWith("-electric") ? electricityExtras(this.serial) : {};
    const settled = { ...entry, status, extras: extras ?? { ...defaults, ...entry.extras } };
    this.transactions.set(requestId, settled);
    return settled;
  }

  /** The requery answer for a request id, or undefined when the provider never received it. */
  answer(requestId: string): Record<string, unknown> | undefined {
    const entry = this.transactions.get(requestId);
    return entry ? vtuAnswer(entry) : undefined;
  }

  addCustomer(serviceID: string, billersCode: string, customer: Record<string, unknown>): void {
    this.customers.set(`${serviceID}:${billersCode}`, customer);
  }

  customer(serviceID: string, billersCode: string): Record<string, unknown> | undefined {
    return this.customers.get(`${serviceID}:${billersCode}`);
  }

  requestsTo(path: VtuRecordedRequest["path"]): VtuRecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }
}

/** A VTpass answer describing one order (pay, requery and callback `data` share it). */
export function vtuAnswer(entry: VtuBookEntry): Record<string, unknown> {
  return {
    code: entry.status === "failed" ? "016" : "000",
    content: {
      transactions: {
        status: entry.status,
        product_name: entry.serviceID,
        unique_element: entry.billersCode,
        unit_price: entry.amount,
        quantity: 1,
        commission: 0,
        total_amount: entry.amount,
        phone: entry.phone,
        amount: entry.amount,
        platform: "api",
        method: "api",
        transactionId: entry.transactionId,
      },
    },
    response_description: descriptions[entry.status],
    requestId: entry.request_id,
    amount: entry.amount,
    transaction_date: new Date().toISOString(),
    purchased_code: "",
    ...entry.extras,
  };
}

/** The body VTpass would post to our callback URL about a request id in the book. */
export function vtuCallbackBody(book: VtuBook, requestId: string): { type: "transaction-update"; data: Record<string, unknown> } {
  const data = book.answer(requestId);
  if (!data) throw new Error(`the VTU book holds no ${requestId}`);
  return { type: "transaction-update", data };
}

/** The sandbox's last-four-digits outcomes (openapi.yaml, `vendProduct`) played by the VTU mock. */
export function scenarioByDestination(body: VtuPayBody): VtuPayScenario {
  const lastFour = body.billersCode.slice(-4);
  if (lastFour === "1111") return { kind: "fail" };
  if (lastFour === "2222" || lastFour === "3333" || lastFour === "4444") return { kind: "processing" };
  if (lastFour === "5555") return { kind: "server-error", outcome: "delivered" };
  return { kind: "deliver" };
}

function readPayBody(body: unknown): VtuPayBody | null {
  if (!isRecord(body)) return null;
  const { request_id, serviceID, billersCode, variation_code, amount, phone } = body;
  if (typeof request_id !== "string" || typeof serviceID !== "string" || typeof billersCode !== "string") return null;
  if (typeof amount !== "number" || typeof phone !== "string") return null;
  if (variation_code !== undefined && typeof variation_code !== "string") return null;
  return { request_id, serviceID, billersCode, amount, phone, ...(variation_code ? { variation_code } : {}) };
}

const vtuLooks: FaultLooks = {
  errorPage: "<html><body>502 Bad Gateway</body></html>",
  defaultErrorStatus: 502,
  malformedBody: '{"code": "000", "content": {"transac',
};

function vtuFaultResponse(fault: VtuFault, request: Request, lateBody: Record<string, unknown>): Promise<Response> {
  if (fault.kind === "wrong-shape") return Promise.resolve(HttpResponse.json({ success: true, data: [] }));
  return faultResponse(fault, request, lateBody, vtuLooks);
}

export interface VtuMockOptions {
  book: VtuBook;
  config?: Pick<VtuConfig, "baseUrl" | "apiKey" | "secretKey">;
  /** Defaults to `scenarioByDestination`. */
  pay?: VtuPayScenario | ((body: VtuPayBody) => VtuPayScenario);
  /** A fault for a requery; undefined (the default) answers from the book. */
  requery?: VtuFault | ((requestId: string) => VtuFault | undefined);
  /** A fault for merchant-verify, or one chosen by the number verified. */
  verify?: VtuFault | ((billersCode: string) => VtuFault | undefined);
}

/** msw handlers for `/api/pay`, `/api/requery` and `/api/merchant-verify`. */
export function vtuHandlers(options: VtuMockOptions): HttpHandler[] {
  const { book, config = vtuTestConfig } = options;
  const hidden = (body: VtuPayBody, outcome: VtuHiddenOutcome) => {
    if (outcome === "not-received") return { code: "015", response_description: "INVALID REQUEST ID" };
    return vtuAnswer(book.record(body, outcome));
  };

  async function receive(path: VtuRecordedRequest["path"], request: Request): Promise<{ body: unknown; denied?: Response }> {
    const body: unknown = await request.json().catch(() => null);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    book.requests.push({ path, headers, body });
    if (request.headers.get("api-key") !== config.apiKey || request.headers.get("secret-key") !== config.secretKey) {
      return { body, denied: HttpResponse.json({ code: "087", response_description: "INVALID CREDENTIALS" }, { status: 401 }) };
    }
    return { body };
  }

  return [
    http.post(`${config.baseUrl}/api/pay`, async ({ request }) => {
      const { body, denied } = await receive("pay", request);
      if (denied) return denied;
      const order = readPayBody(body);
      if (!order) return HttpResponse.json({ code: "011", response_description: "INVALID ARGUMENTS" }, { status: 400 });
      if (book.transactions.has(order.request_id)) {
        return HttpResponse.json({ code: "014", response_description: "REQUEST ID ALREADY EXIST" });
      }
      const scenario = typeof options.pay === "function" ? options.pay(order) : (options.pay ?? scenarioByDestination(order));
      switch (scenario.kind) {
        case "deliver":
          return HttpResponse.json(vtuAnswer(book.record(order, "delivered", scenario.extras)));
        case "processing":
          book.record(order, "pending");
          return HttpResponse.json({
            code: "099",
            response_description: "TRANSACTION IS PROCESSING",
            requestId: order.request_id,
          });
        case "initiated":
          return HttpResponse.json(vtuAnswer(book.record(order, "initiated")));
        case "fail": {
          const answer = vtuAnswer(book.record(order, "failed"));
          return HttpResponse.json({ ...answer, response_description: scenario.description ?? "TRANSACTION FAILED" });
        }
        case "refuse":
          return HttpResponse.json(
            { code: scenario.code, response_description: scenario.description },
            { status: scenario.httpStatus ?? 200 },
          );
        default:
          return vtuFaultResponse(scenario, request, hidden(order, scenario.outcome));
      }
    }),

    http.post(`${config.baseUrl}/api/requery`, async ({ request }) => {
      const { body, denied } = await receive("requery", request);
      if (denied) return denied;
      const requestId = isRecord(body) ? body.request_id : undefined;
      if (typeof requestId !== "string") return HttpResponse.json({ code: "011", response_description: "INVALID ARGUMENTS" });
      const fault = typeof options.requery === "function" ? options.requery(requestId) : options.requery;
      const answer = book.answer(requestId) ?? { code: "015", response_description: "INVALID REQUEST ID" };
      return fault ? vtuFaultResponse(fault, request, answer) : HttpResponse.json(answer);
    }),

    http.get(`${config.baseUrl}/api/balance`, async ({ request }) => {
      const { denied } = await receive("balance", request);
      if (denied) return denied;
      return HttpResponse.json({ code: 1, contents: { balance: (book.balanceKobo / 100).toFixed(2) } });
    }),

    http.post(`${config.baseUrl}/api/merchant-verify`, async ({ request }) => {
      const { body, denied } = await receive("merchant-verify", request);
      if (denied) return denied;
      const fields = isRecord(body) ? body : {};
      const customer = book.customer(String(fields.serviceID), String(fields.billersCode));
      const answer = customer
        ? { code: "000", content: { ...customer, WrongBillersCode: false } }
        : {
            code: "000",
            content: { error: "This customer number is invalid. Please check and try again", WrongBillersCode: true },
          };
      const fault = typeof options.verify === "function" ? options.verify(String(fields.billersCode)) : options.verify;
      return fault ? vtuFaultResponse(fault, request, answer) : HttpResponse.json(answer);
    }),
  ];
}
