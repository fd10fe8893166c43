import { delay, type HttpHandler, HttpResponse, http } from "msw";
import type { ClubkonnectConfig } from "../../src/providers/clubkonnect/config.ts";
import { type FaultLooks, faultResponse, type ProviderFault } from "./provider-faults.ts";

/**
 * A scriptable ClubKonnect-style provider, for msw (`clubkonnectHandlers`) or as a real HTTP server
 * (`startFakeClubkonnectServer`). A `ClubkonnectBook` remembers every order by RequestID (including orders
 * whose answer was lost) and every request it received, so queries agree with what the orders did:
 *
 *   const network = setupMockFetch(); // from ./vtu-mock.ts
 *   beforeAll(() => network.enable()); afterEach(() => network.resetHandlers()); afterAll(() => network.disable());
 *   const book = new ClubkonnectBook();
 *   network.use(...clubkonnectHandlers({ book, vend: { kind: "timeout", outcome: "completed" } }));
 */

export const clubkonnectTestCallbackUrl = "https://vend.service.test/hints/clubkonnect";

export const clubkonnectTestConfig: ClubkonnectConfig = {
  baseUrl: "https://clubkonnect.provider.test",
  userId: "CK100000001",
  apiKey: "CKTESTAPIKEY0123456789SECRET",
  callbackUrl: clubkonnectTestCallbackUrl,
  timeoutMs: 1000,
};

export const clubkonnectOrderPaths = ["APIAirtimeV1.asp", "APIDatabundleV1.asp", "APICableTVV1.asp", "APIElectricityV1.asp"];
const queryPath = "APIQueryV1.asp";

/** The parameters each order endpoint requires (besides the credentials); a missing one is refused as MISSING_<NAME>. */
const requiredParams: Readonly<Record<string, readonly string[]>> = {
  "APIAirtimeV1.asp": ["MobileNetwork", "Amount", "MobileNumber", "RequestID"],
  "APIDatabundleV1.asp": ["MobileNetwork", "DataPlan", "MobileNumber", "RequestID"],
  "APICableTVV1.asp": ["CableTV", "Package", "SmartCardNo", "PhoneNo", "RequestID"],
  "APIElectricityV1.asp": ["ElectricCompany", "MeterType", "MeterNo", "Amount", "PhoneNo", "RequestID"],
};

export type ClubkonnectStatus = "ORDER_RECEIVED" | "ORDER_ONHOLD" | "ORDER_COMPLETED" | "ORDER_CANCELLED";

/** Our stand-ins for ClubKonnect's status codes (100 received and 200 completed are documented). */
const statusCodes: Record<ClubkonnectStatus, string> = {
  ORDER_RECEIVED: "100",
  ORDER_ONHOLD: "600",
  ORDER_COMPLETED: "200",
  ORDER_CANCELLED: "500",
};

export interface ClubkonnectRecordedRequest {
  /** The endpoint, e.g. "APIAirtimeV1.asp". */
  path: string;
  /** Every query parameter as received, the credentials included. */
  query: Record<string, string>;
}

export interface ClubkonnectBookEntry {
  requestId: string;
  orderId: string;
  path: string;
  /** The order's parameters, without the credentials. */
  params: Record<string, string>;
  status: ClubkonnectStatus;
  statuscode: string;
  remark: string;
  /** Extra answer fields: metertoken, receiptno… */
  extras: Record<string, unknown>;
}

/** What the provider really did with an order whose answer got lost. */
export type ClubkonnectHiddenOutcome = "completed" | "received" | "cancelled" | "not-received";

/** A broken answer: the client cannot tell what happened. */
export type ClubkonnectFault = ProviderFault;

export type ClubkonnectVendScenario =
  /** ORDER_COMPLETED (200); with `afterMs` it is held as ORDER_RECEIVED that long first, as a slow vend. */
  | { kind: "deliver"; extras?: Record<string, unknown>; afterMs?: number }
  /** ORDER_RECEIVED (100); the book holds it until `book.settle`. */
  | { kind: "received" }
  /** ORDER_CANCELLED at once; the book holds it cancelled. */
  | { kind: "cancel"; remark?: string }
  /** A refusal before anything happens (INSUFFICIENT_BALANCE, INVALID_RECIPIENT…); the book never hears of it. */
  | { kind: "refuse"; word: string; httpStatus?: number }
  | (ClubkonnectFault & { outcome: ClubkonnectHiddenOutcome });

/** An order as the mock received it: its endpoint and parameters (without the credentials). */
export interface ClubkonnectOrderRequest {
  path: string;
  params: Record<string, string>;
}

function electricityExtras(serial: number): Record<string, unknown> {
  const digits = (12345678901234567890n + BigInt(serial)).toString();
  const token = digits.match(/\d{4}/g)?.join("-") ?? digits;
  return { metertoken: `Token: ${token} Units: 12.5kWh`, receiptno: `RCPT${100000 + serial}` };
}

const remarks: Record<ClubkonnectStatus, string> = {
  ORDER_RECEIVED: "Your order has been received",
  ORDER_ONHOLD: "Your order is on hold and will be retried",
  ORDER_COMPLETED: "Your order has been completed successfully",
  ORDER_CANCELLED: "Your order was cancelled and your wallet refunded",
};

/** `orders` holds at most one order per RequestID; `requests` shows how often each was sent. */
export class ClubkonnectBook {
  readonly orders = new Map<string, ClubkonnectBookEntry>();
  readonly requests: ClubkonnectRecordedRequest[] = [];
  /** Our float at the provider, answered by APIWalletBalanceV1.asp in naira. */
  balanceKobo = 5_000_000;
  private readonly customers = new Map<string, Record<string, unknown>>();
  private serial = 0;

  record(order: ClubkonnectOrderRequest, status: ClubkonnectStatus, extras?: Record<string, unknown>): ClubkonnectBookEntry {
    this.serial += 1;
    const requestId = order.params.RequestID ?? "";
    const entry: ClubkonnectBookEntry = {
      requestId,
      orderId: String(6_500_000_000 + this.serial),
      path: order.path,
      params: order.params,
      status,
      statuscode: statusCodes[status],
      remark: remarks[status],
      extras: extras ?? this.defaultExtras(order.path, status),
    };
    this.orders.set(requestId, entry);
    return entry;
  }

  /** Moves a held order on (e.g. received → completed), as the provider would before its callback. */
  settle(requestId: string, status: ClubkonnectStatus, extras?: Record<string, unknown>): ClubkonnectBookEntry {
    const entry = this.orders.get(requestId);
    if (!entry) throw new Error(`the ClubKonnect book holds no ${requestId}`);
    const settled: ClubkonnectBookEntry = {
      ...entry,
      status,
      statuscode: statusCodes[status],
      remark: remarks[status],
      extras: extras ?? { ...this.defaultExtras(entry.path, status), ...entry.extras },
    };
    this.orders.set(requestId, settled);
    return settled;
  }

  /** The query answer for a RequestID (or, with `by: "orderid"`, an order id); undefined when none was received. */
  answer(id: string, by: "requestid" | "orderid" = "requestid"): Record<string, unknown> | undefined {
    const entry = by === "requestid" ? this.orders.get(id) : [...this.orders.values()].find((e) => e.orderId === id);
    return entry ? clubkonnectQueryAnswer(entry) : undefined;
  }

  addCustomer(company: string, number: string, customer: Record<string, unknown>): void {
    this.customers.set(`${company}:${number}`, customer);
  }

  customer(company: string, number: string): Record<string, unknown> | undefined {
    return this.customers.get(`${company}:${number}`);
  }

  requestsTo(path: string): ClubkonnectRecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Every order request that carried this RequestID, whatever it was answered. */
  ordersSentFor(requestId: string): ClubkonnectRecordedRequest[] {
    return this.requests.filter((r) => clubkonnectOrderPaths.includes(r.path) && r.query.RequestID === requestId);
  }

  private defaultExtras(path: string, status: ClubkonnectStatus): Record<string, unknown> {
    return status === "ORDER_COMPLETED" && path === "APIElectricityV1.asp" ? electricityExtras(this.serial) : {};
  }
}

/** An order's answer: the order id, its status, and what a completed order returns (metertoken…). */
export function clubkonnectOrderAnswer(entry: ClubkonnectBookEntry): Record<string, unknown> {
  return {
    orderid: entry.orderId,
    requestid: entry.requestId,
    statuscode: entry.statuscode,
    status: entry.status,
    ...entry.extras,
  };
}

/** `APIQueryV1.asp`'s answer about one order. */
export function clubkonnectQueryAnswer(entry: ClubkonnectBookEntry): Record<string, unknown> {
  return {
    orderid: entry.orderId,
    orderdate: "22th-Jul-2025",
    requestid: entry.requestId,
    statuscode: entry.statuscode,
    status: entry.status,
    remark: entry.remark,
    ordertype: entry.path.replace(/^API|V1\.asp$/g, ""),
    amountcharged: entry.params.Amount ?? "",
    ...entry.extras,
  };
}

/** The query parameters ClubKonnect would send to our CallBackURL about a RequestID in the book. */
export function clubkonnectCallbackQuery(book: ClubkonnectBook, requestId: string): Record<string, string> {
  const entry = book.orders.get(requestId);
  if (!entry) throw new Error(`the ClubKonnect book holds no ${requestId}`);
  return {
    orderdate: "22th-Jul-2025",
    orderid: entry.orderId,
    requestid: entry.requestId,
    statuscode: entry.statuscode,
    orderstatus: entry.status,
    orderremark: entry.remark,
  };
}

/** The sandbox's last-four-digits outcomes (openapi.yaml, `vendProduct`) played by the ClubKonnect mock. */
export function scenarioByDestination(order: ClubkonnectOrderRequest): ClubkonnectVendScenario {
  const destination = order.params.MobileNumber ?? order.params.MeterNo ?? order.params.SmartCardNo ?? "";
  const lastFour = destination.slice(-4);
  if (lastFour === "1111") return { kind: "cancel" };
  if (lastFour === "2222" || lastFour === "3333" || lastFour === "4444") return { kind: "received" };
  if (lastFour === "5555") return { kind: "server-error", outcome: "completed" };
  return { kind: "deliver" };
}

export interface ClubkonnectMockOptions {
  book: ClubkonnectBook;
  config?: Pick<ClubkonnectConfig, "baseUrl" | "userId" | "apiKey">;
  /** Defaults to `scenarioByDestination`. */
  vend?: ClubkonnectVendScenario | ((order: ClubkonnectOrderRequest) => ClubkonnectVendScenario);
  /** A fault for a query; undefined (the default) answers from the book. */
  query?: ClubkonnectFault | ((requestId: string) => ClubkonnectFault | undefined);
  /** A fault for APIVerifyElectricityV1.asp and APIVerifyCableTVV1.0.asp. */
  verify?: ClubkonnectFault;
}

const word = (status: string, httpStatus = 200) => HttpResponse.json({ status }, { status: httpStatus });

const clubkonnectLooks: FaultLooks = {
  errorPage: "<html><body>500 - Internal server error.</body></html>",
  defaultErrorStatus: 500,
  malformedBody: '{"orderid":"6500000001","statuscode":"1',
};

/**
 * The provider's answers to one GET, from the book: orders, queries, verifications and the balance. A
 * repeated RequestID is answered with the order already held, as ClubKonnect does, and never booked twice.
 */
export function clubkonnectResponder(options: ClubkonnectMockOptions): (request: Request) => Promise<Response> {
  const { book, config = clubkonnectTestConfig } = options;

  function hidden(order: ClubkonnectOrderRequest, outcome: ClubkonnectHiddenOutcome): Record<string, unknown> {
    if (outcome === "not-received") return { status: "INVALID_REQUESTID" };
    const status = ({ completed: "ORDER_COMPLETED", received: "ORDER_RECEIVED", cancelled: "ORDER_CANCELLED" } as const)[outcome];
    return clubkonnectOrderAnswer(book.record(order, status));
  }

  async function vend(order: ClubkonnectOrderRequest, request: Request): Promise<Response> {
    const scenario = typeof options.vend === "function" ? options.vend(order) : (options.vend ?? scenarioByDestination(order));
    switch (scenario.kind) {
      case "deliver": {
        if (!scenario.afterMs)
          return HttpResponse.json(clubkonnectOrderAnswer(book.record(order, "ORDER_COMPLETED", scenario.extras)));
        book.record(order, "ORDER_RECEIVED");
        await delay(scenario.afterMs);
        return HttpResponse.json(
          clubkonnectOrderAnswer(book.settle(order.params.RequestID ?? "", "ORDER_COMPLETED", scenario.extras)),
        );
      }
      case "received":
        return HttpResponse.json(clubkonnectOrderAnswer(book.record(order, "ORDER_RECEIVED")));
      case "cancel": {
        const entry = book.record(order, "ORDER_CANCELLED");
        return HttpResponse.json({ ...clubkonnectOrderAnswer(entry), remark: scenario.remark ?? entry.remark });
      }
      case "refuse":
        return word(scenario.word, scenario.httpStatus);
      default:
        return faultResponse(scenario, request, hidden(order, scenario.outcome), clubkonnectLooks);
    }
  }

  async function order(path: string, params: Record<string, string>, request: Request): Promise<Response> {
    const missing = requiredParams[path]?.find((name) => !params[name]);
    if (missing) return word(`MISSING_${missing.toUpperCase()}`);
    const known = book.orders.get(params.RequestID ?? "");
    if (known) return HttpResponse.json(clubkonnectOrderAnswer(known));
    return vend({ path, params }, request);
  }

  async function query(params: Record<string, string>, request: Request): Promise<Response> {
    const requestId = params.RequestID;
    const answer = requestId ? book.answer(requestId) : book.answer(params.OrderID ?? "", "orderid");
    const unknown = { status: requestId ? "INVALID_REQUESTID" : "INVALID_ORDERID" };
    const fault = typeof options.query === "function" ? options.query(requestId ?? "") : options.query;
    return fault ? faultResponse(fault, request, answer ?? unknown, clubkonnectLooks) : HttpResponse.json(answer ?? unknown);
  }

  async function verify(company: string, number: string, unknownWord: string, request: Request): Promise<Response> {
    const customer = book.customer(company, number);
    const answer = customer ?? { customer_name: unknownWord };
    return options.verify ? faultResponse(options.verify, request, answer, clubkonnectLooks) : HttpResponse.json(answer);
  }

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname.replace(/^\/+/, "");
    const received = Object.fromEntries(url.searchParams);
    book.requests.push({ path, query: received });
    const { UserID, APIKey, ...params } = received;
    if (!UserID || !APIKey) return word("MISSING_CREDENTIALS");
    if (UserID !== config.userId || APIKey !== config.apiKey) return word("INVALID_CREDENTIALS");
    if (clubkonnectOrderPaths.includes(path)) return order(path, params, request);
    if (path === queryPath) return query(params, request);
    if (path === "APIVerifyElectricityV1.asp") {
      return verify(params.ElectricCompany ?? "", params.MeterNo ?? "", "INVALID_METERNO", request);
    }
    if (path === "APIVerifyCableTVV1.0.asp")
      return verify(params.CableTV ?? "", params.SmartCardNo ?? "", "INVALID_SMARTCARDNO", request);
    if (path === "APIWalletBalanceV1.asp") {
      return HttpResponse.json({ date: "22th-Jul-2025", id: config.userId, balance: (book.balanceKobo / 100).toFixed(2) });
    }
    return new HttpResponse("<html><body>404 - File or directory not found.</body></html>", { status: 404 });
  };
}

/** msw handlers for every endpoint under the configured base URL. */
export function clubkonnectHandlers(options: ClubkonnectMockOptions): HttpHandler[] {
  const respond = clubkonnectResponder(options);
  const baseUrl = (options.config ?? clubkonnectTestConfig).baseUrl;
  return [http.get(`${baseUrl}/:endpoint`, ({ request }) => respond(request))];
}

/**
 * The same provider as a real HTTP server on 127.0.0.1, for drills where the service runs as separate
 * processes (msw cannot reach into them). Like the real one it books an order the moment it receives it, so
 * a query during a slow vend answers ORDER_RECEIVED, and answers a repeated RequestID with the order it holds.
 * While `down()` is true it answers HTTP 503 to orders (booking nothing) and to queries.
 */
export function startFakeClubkonnectServer(
  options: { delayMs?: number | ((order: ClubkonnectOrderRequest) => number); down?: () => boolean } = {},
) {
  const book = new ClubkonnectBook();
  const afterMs = (order: ClubkonnectOrderRequest) =>
    typeof options.delayMs === "function" ? options.delayMs(order) : (options.delayMs ?? 0);
  const respond = clubkonnectResponder({ book, vend: (order) => ({ kind: "deliver", afterMs: afterMs(order) }) });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname.replace(/^\/+/, "");
      if (options.down?.() && (clubkonnectOrderPaths.includes(path) || path === queryPath)) {
        book.requests.push({ path, query: Object.fromEntries(url.searchParams) });
        return new Response("<html><body>503 Service Unavailable</body></html>", { status: 503 });
      }
      return respond(request);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    book,
    stop: () => server.stop(true),
  };
}
