import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config.ts";
import { loadConfig } from "../../src/load-config.ts";
import { readClubkonnectCallback } from "../../src/providers/clubkonnect/callbacks.ts";
import { createClubkonnectProvider } from "../../src/providers/clubkonnect/client.ts";
import { fallbackCustomerPhone, planClubkonnectOrder } from "../../src/providers/clubkonnect/mapping.ts";
import { ProviderUnavailableError } from "../../src/providers/types.ts";
import {
  ClubkonnectBook,
  type ClubkonnectMockOptions,
  clubkonnectCallbackQuery,
  clubkonnectHandlers,
  clubkonnectTestCallbackUrl,
  clubkonnectTestConfig,
  startFakeClubkonnectServer,
} from "../helpers/clubkonnect-mock.ts";
import { providerOrders } from "../helpers/provider-orders.ts";
import { setupMockFetch } from "../helpers/vtu-mock.ts";
import { waitUntil } from "../helpers/wait.ts";

const network = setupMockFetch();
beforeAll(() => network.enable());
afterEach(() => network.resetHandlers());
afterAll(() => network.disable());

const provider = createClubkonnectProvider(clubkonnectTestConfig);
const fast = createClubkonnectProvider({ ...clubkonnectTestConfig, timeoutMs: 100 });
const { apiKey } = clubkonnectTestConfig;
const order = providerOrders("cktest");

function mock(options: Omit<ClubkonnectMockOptions, "book"> = {}): ClubkonnectBook {
  const book = new ClubkonnectBook();
  network.use(...clubkonnectHandlers({ book, ...options }));
  return book;
}

/** The one order request the book received: it proves exactly one was sent. */
function onlyOrderQuery(book: ClubkonnectBook, path: string): Record<string, string> {
  const sent = book.requestsTo(path);
  expect(book.requests).toHaveLength(1);
  expect(sent).toHaveLength(1);
  return sent[0]?.query ?? {};
}

/** A provider whose every GET gets this answer, and the URLs it asked for. */
function stubbed(answer: unknown, init: ResponseInit = {}) {
  const urls: string[] = [];
  const adapter = createClubkonnectProvider(clubkonnectTestConfig, {
    fetch: async (input) => {
      urls.push(input);
      return Response.json(answer, init);
    },
  });
  return { adapter, urls };
}

async function failure(promise: Promise<unknown>): Promise<ProviderUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderUnavailableError);
  if (!(error instanceof ProviderUnavailableError)) throw new Error("no ProviderUnavailableError");
  // The key travels in the URL; no message may repeat it.
  expect(error.message).not.toContain(apiKey);
  return error;
}

const credentials = { UserID: clubkonnectTestConfig.userId, APIKey: apiKey };
const callback = { CallBackURL: clubkonnectTestCallbackUrl };

describe("orders: one success per service, and what was sent", () => {
  test("airtime: network code, naira amount, RequestID = reference, credentials and CallBackURL as query parameters", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    const o = order({ amountKobo: 123_456 });
    const outcome = await provider.vend(o);
    const entry = book.orders.get(o.reference);
    expect(outcome).toEqual({ status: "successful", providerReference: entry?.orderId ?? "" });
    expect(onlyOrderQuery(book, "APIAirtimeV1.asp")).toEqual({
      ...credentials,
      MobileNetwork: "01",
      Amount: "1234.56",
      MobileNumber: "08031234567",
      RequestID: o.reference,
      ...callback,
    });
  });

  test.each([
    ["mtn", "01"],
    ["glo", "02"],
    ["9mobile", "03"],
    ["airtel", "04"],
  ])("airtime on %s goes as MobileNetwork %s", async (networkName, code) => {
    const book = mock({ vend: { kind: "deliver" } });
    await provider.vend(order({ network: networkName, productCode: `${networkName}-airtime` }));
    expect(onlyOrderQuery(book, "APIAirtimeV1.asp")).toMatchObject({ MobileNetwork: code, Amount: "500" });
  });

  test("without a callback URL configured no CallBackURL is sent", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    await createClubkonnectProvider({ ...clubkonnectTestConfig, callbackUrl: undefined }).vend(order());
    expect(onlyOrderQuery(book, "APIAirtimeV1.asp")).not.toHaveProperty("CallBackURL");
  });

  test.each([
    ["mtn", "mtn-data-1gb-1d", "01", "1000.1"],
    ["glo", "glo-data-5gb-30d", "02", "5000.0"],
    ["9mobile", "9mobile-data-2gb-3d", "03", "2000.3"],
    ["airtel", "airtel-data-10gb-30d", "04", "10000.0"],
  ])("data on %s: %s goes as the default DataPlan", async (networkName, productCode, code, plan) => {
    const book = mock({ vend: { kind: "deliver" } });
    const o = order({ service: "data", network: networkName, productCode, requestedMb: 1024 });
    expect((await provider.vend(o)).status).toBe("successful");
    expect(onlyOrderQuery(book, "APIDatabundleV1.asp")).toEqual({
      ...credentials,
      MobileNetwork: code,
      DataPlan: plan,
      MobileNumber: "08031234567",
      RequestID: o.reference,
      ...callback,
    });
  });

  test("data: the provider code from the providers file overrides the default plan", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    await provider.vend(order({ service: "data", productCode: "mtn-data-1gb-1d", providerCode: "1000.01" }));
    expect(onlyOrderQuery(book, "APIDatabundleV1.asp")).toMatchObject({ DataPlan: "1000.01" });
  });

  test("data: a bundle with no default plan and no provider code fails without a request", async () => {
    const book = mock();
    const outcome = await provider.vend(order({ service: "data", productCode: "mtn-data-3gb-14d" }));
    expect(outcome).toEqual({ status: "failed", message: "ClubKonnect sells no data bundle mtn-data-3gb-14d for mtn" });
    expect(book.requests).toHaveLength(0);
  });

  test("electricity: disco code, meter type, customer phone; token, units and receipt come back", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    const o = order({
      service: "electricity",
      network: "ikedc",
      productCode: "ikedc-prepaid",
      destination: "45031234567",
      meterType: "prepaid",
      phoneNumber: "08051234567",
      amountKobo: 500_000,
    });
    const outcome = await provider.vend(o);
    expect(onlyOrderQuery(book, "APIElectricityV1.asp")).toEqual({
      ...credentials,
      ElectricCompany: "02",
      MeterType: "01",
      MeterNo: "45031234567",
      Amount: "5000",
      PhoneNo: "08051234567",
      RequestID: o.reference,
      ...callback,
    });
    expect(outcome).toEqual({
      status: "successful",
      providerReference: book.orders.get(o.reference)?.orderId ?? "",
      result: {
        token: expect.stringMatching(/^\d{4}(-\d{4}){4}$/),
        units: "12.5 kWh",
        receipt_number: expect.stringMatching(/^RCPT/),
      },
    });
  });

  test("electricity postpaid without a phone: the meter type follows the product, the phone falls back", async () => {
    const book = mock({ vend: { kind: "deliver", extras: {} } });
    const outcome = await provider.vend(
      order({ service: "electricity", network: "aedc", productCode: "aedc-postpaid", destination: "0101150251911" }),
    );
    expect(outcome).toEqual({ status: "successful", providerReference: expect.any(String) });
    expect(onlyOrderQuery(book, "APIElectricityV1.asp")).toMatchObject({
      ElectricCompany: "03",
      MeterType: "02",
      PhoneNo: fallbackCustomerPhone,
    });
  });

  test.each([
    ["ekedc", "01"],
    ["ikedc", "02"],
    ["aedc", "03"],
    ["kedco", "04"],
    ["phed", "05"],
    ["jed", "06"],
    ["ibedc", "07"],
    ["kaedco", "08"],
    ["eedc", "09"],
    ["bedc", "10"],
    ["yedc", "11"],
  ])("disco %s → ElectricCompany %s", (disco, code) => {
    const plan = planClubkonnectOrder(order({ service: "electricity", network: disco, productCode: `${disco}-prepaid` }));
    expect(plan.kind === "send" ? plan.request.params.ElectricCompany : plan.message).toBe(code);
  });

  test.each([
    ["dstv", "dstv-padi"],
    ["gotv", "gotv-max"],
    ["startimes", "startimes-nova"],
    ["showmax", "showmax-mobile"],
  ])("cable %s: our bouquet code %s as Package, the smartcard as SmartCardNo", async (networkName, productCode) => {
    const book = mock({ vend: { kind: "deliver" } });
    const o = order({
      service: "cable",
      network: networkName,
      productCode,
      destination: "7027914329",
      phoneNumber: "08031112222",
    });
    expect(await provider.vend(o)).toEqual({ status: "successful", providerReference: expect.any(String) });
    expect(onlyOrderQuery(book, "APICableTVV1.asp")).toEqual({
      ...credentials,
      CableTV: networkName,
      Package: productCode,
      SmartCardNo: "7027914329",
      PhoneNo: "08031112222",
      RequestID: o.reference,
      ...callback,
    });
  });

  test("cable: the provider code overrides our bouquet code", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    await provider.vend(order({ service: "cable", network: "dstv", productCode: "dstv-compact", providerCode: "dstv79" }));
    expect(onlyOrderQuery(book, "APICableTVV1.asp")).toMatchObject({ Package: "dstv79", PhoneNo: fallbackCustomerPhone });
  });

  test.each([
    [{ network: "ntel", productCode: "ntel-airtime" }, "ClubKonnect sells no airtime for ntel"],
    [{ service: "electricity", network: "aple", productCode: "aple-prepaid" }, "ClubKonnect sells no electricity for aple"],
    [{ service: "cable", network: "trendtv", productCode: "trendtv-basic" }, "ClubKonnect sells no cable for trendtv"],
  ] as const)("a product it does not sell (%j) fails without a request", async (overrides, message) => {
    const book = mock();
    expect(await provider.vend(order(overrides))).toEqual({ status: "failed", message });
    expect(book.requests).toHaveLength(0);
  });
});

describe("status words", () => {
  test("ORDER_RECEIVED → pending; ORDER_ONHOLD → pending; ORDER_COMPLETED → successful with the token", async () => {
    const book = mock({ vend: { kind: "received" } });
    const o = order({ service: "electricity", network: "ekedc", productCode: "ekedc-prepaid", destination: "45031234567" });
    const orderId = () => book.orders.get(o.reference)?.orderId ?? "";
    expect(await provider.vend(o)).toEqual({ status: "pending", providerReference: orderId(), message: "ORDER_RECEIVED" });
    expect(await provider.requery(o)).toEqual({
      status: "pending",
      providerReference: orderId(),
      message: "Your order has been received",
    });
    book.settle(o.reference, "ORDER_ONHOLD");
    expect(await provider.requery(o)).toMatchObject({ status: "pending", message: "Your order is on hold and will be retried" });
    book.settle(o.reference, "ORDER_COMPLETED");
    expect(await provider.requery(o)).toEqual({
      status: "successful",
      providerReference: orderId(),
      result: { token: expect.any(String), units: "12.5 kWh", receipt_number: expect.any(String) },
    });
    const queries = book.requestsTo("APIQueryV1.asp").map((r) => r.query);
    expect(queries).toEqual([1, 2, 3].map(() => ({ ...credentials, RequestID: o.reference })));
  });

  test("ORDER_CANCELLED → failed with the remark, on the order and on a re-query", async () => {
    mock({ vend: { kind: "cancel", remark: "Recipient number barred" } });
    const o = order();
    expect(await provider.vend(o)).toEqual({
      status: "failed",
      providerReference: expect.any(String),
      message: "Recipient number barred",
      failureCode: "not_delivered",
    });
    expect(await provider.requery(o)).toMatchObject({
      status: "failed",
      message: "Your order was cancelled and your wallet refunded",
      failureCode: "not_delivered",
    });
  });

  test.each([
    [{ orderid: "65", statuscode: "201", status: "ORDER_COMPLETED" }, "pending"],
    [{ orderid: "65", statuscode: "300", status: "ORDER_PROCESSED" }, "pending"],
    [{ orderid: "65", status: "ORDER_COMPLETED" }, "successful"],
    [{ orderid: "65", statuscode: "500", status: "order_cancelled" }, "failed"],
    [{ orderid: "65", status: "ORDER_FAILED", remark: "failed at the network" }, "failed"],
  ] as const)("%j → %s", async (answer, status) => {
    expect((await stubbed(answer).adapter.vend(order())).status).toBe(status);
  });

  test("ORDER_COMPLETED under a code other than 200 is no delivery yet: pending, saying which code", async () => {
    const { adapter } = stubbed({ orderid: "65", statuscode: "201", status: "ORDER_COMPLETED" });
    expect(await adapter.requery(order())).toEqual({
      status: "pending",
      providerReference: "65",
      message: "ORDER_COMPLETED with status code 201",
    });
  });
});

describe("refusals before anything is bought", () => {
  test.each([
    ["INSUFFICIENT_BALANCE", 200, "insufficient_provider_float"],
    ["INVALID_RECIPIENT", 200, "invalid_destination"],
    ["MISSING_MOBILENETWORK", 200, "provider_refused"],
    ["INVALID_DATAPLAN", 200, "provider_refused"],
    ["MINIMUM_50", 200, "provider_refused"],
    ["DATAPLAN_NOT_AVAILABLE", 200, "provider_refused"],
    ["INVALID_AMOUNT", 400, "provider_refused"],
  ] as const)("%s (HTTP %d) → failed (%s), nothing booked", async (word, httpStatus, failureCode) => {
    const book = mock({ vend: { kind: "refuse", word, httpStatus } });
    expect(await provider.vend(order())).toEqual({
      status: "failed",
      message: `ClubKonnect refused the order: ${word}`,
      failureCode,
    });
    expect(book.orders.size).toBe(0);
  });

  test("wrong credentials on an order → failed (refused before anything happened)", async () => {
    const book = mock();
    const misconfigured = createClubkonnectProvider({ ...clubkonnectTestConfig, apiKey: "WRONGKEY" });
    expect(await misconfigured.vend(order())).toEqual({
      status: "failed",
      message: "ClubKonnect refused the order: INVALID_CREDENTIALS",
      failureCode: "provider_refused",
    });
    expect(book.orders.size).toBe(0);
  });

  test("wrong credentials on a re-query say nothing about the order → unavailable (answered)", async () => {
    mock({ vend: { kind: "deliver" } });
    const o = order();
    await provider.vend(o);
    const misconfigured = createClubkonnectProvider({ ...clubkonnectTestConfig, userId: "CK999" });
    const error = await failure(misconfigured.requery(o));
    expect(error.answered).toBe(true);
    expect(error.message).toContain("INVALID_CREDENTIALS");
  });
});

describe("a repeated RequestID", () => {
  test("is answered with the order ClubKonnect holds and never booked twice", async () => {
    const book = mock({ vend: { kind: "deliver" } });
    const o = order();
    const first = await provider.vend(o);
    expect(await provider.vend(o)).toEqual(first);
    expect(book.ordersSentFor(o.reference)).toHaveLength(2);
    expect(book.orders.size).toBe(1);
  });

  test("while the first is still held → pending, not failed", async () => {
    const book = mock({ vend: { kind: "received" } });
    const o = order();
    await provider.vend(o);
    expect((await provider.vend(o)).status).toBe("pending");
    expect(book.orders.size).toBe(1);
  });

  test("a duplicate word without the order's state → pending (its fate is the first attempt's)", async () => {
    expect(await stubbed({ status: "DUPLICATE_REQUESTID" }).adapter.vend(order())).toEqual({
      status: "pending",
      message: "DUPLICATE_REQUESTID",
    });
  });
});

describe("re-query of an order ClubKonnect never received", () => {
  test("INVALID_REQUESTID → not_found, asked by RequestID", async () => {
    const book = mock();
    const o = order();
    expect(await provider.requery(o)).toEqual({ status: "not_found" });
    expect(book.requestsTo("APIQueryV1.asp")[0]?.query).toEqual({ ...credentials, RequestID: o.reference });
  });

  test.each(["INVALID_ORDERID", "ORDER_NOT_FOUND"])("%s → not_found", async (word) => {
    expect(await stubbed({ status: word }).adapter.requery(order())).toEqual({ status: "not_found" });
  });

  test("on an order, a not-found word is a refusal of the order: failed", async () => {
    expect((await stubbed({ status: "INVALID_REQUESTID" }).adapter.vend(order())).status).toBe("failed");
  });
});

describe("unknown fate: ProviderUnavailableError, then re-query", () => {
  test("timeout (not answered): the order was delivered all the same and the re-query finds it", async () => {
    const book = mock({ vend: { kind: "timeout", outcome: "completed", delayMs: 5000 } });
    const o = order();
    const started = performance.now();
    const error = await failure(fast.vend(o));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.answered).toBe(false);
    expect(error.message).toBe("clubkonnect: APIAirtimeV1.asp timed out after 100 ms");
    expect(await fast.requery(o)).toEqual({
      status: "successful",
      providerReference: book.orders.get(o.reference)?.orderId ?? "",
    });
  });

  test.each([500, 502, 503])("HTTP %d (answered); the re-query finds it successful", async (httpStatus) => {
    mock({ vend: { kind: "server-error", httpStatus, outcome: "completed" } });
    const o = order();
    const error = await failure(provider.vend(o));
    expect(error.answered).toBe(true);
    expect(error.message).toContain(`APIAirtimeV1.asp answered HTTP ${httpStatus}`);
    expect((await provider.requery(o)).status).toBe("successful");
  });

  test("a dropped connection whose order never arrived (not answered), then not_found", async () => {
    mock({ vend: { kind: "network-error", outcome: "not-received" } });
    const o = order();
    expect((await failure(provider.vend(o))).answered).toBe(false);
    expect(await provider.requery(o)).toEqual({ status: "not_found" });
  });

  test("malformed JSON (answered); the re-query tells the truth", async () => {
    mock({ vend: { kind: "malformed", outcome: "cancelled" } });
    const o = order();
    const error = await failure(provider.vend(o));
    expect(error.answered).toBe(true);
    expect(error.message).toContain("not JSON");
    expect((await provider.requery(o)).status).toBe("failed");
  });

  test.each([
    ["timeout", { kind: "timeout", delayMs: 2000 }, false],
    ["server error", { kind: "server-error" }, true],
    ["network error", { kind: "network-error" }, false],
    ["malformed", { kind: "malformed" }, true],
  ] as const)("re-query %s → unavailable, answered: %s", async (_name, query, answered) => {
    mock({ query });
    expect((await failure(fast.requery(order()))).answered).toBe(answered);
  });

  test.each([
    ["an answer about another request", { orderid: "65", requestid: "txn_other", statuscode: "200", status: "ORDER_COMPLETED" }],
    ["an unknown word", { status: "SERVICE_DOWN" }],
    ["no status", { orderid: "65", statuscode: "200" }],
    ["a JSON array", [{ status: "ORDER_COMPLETED" }]],
    ["a JSON string", "ORDER_COMPLETED"],
  ])("%s → unavailable (answered) on an order and on a re-query", async (_name, answer) => {
    const { adapter } = stubbed(answer);
    expect((await failure(adapter.vend(order()))).answered).toBe(true);
    expect((await failure(adapter.requery(order()))).answered).toBe(true);
  });

  test("a 4xx that does not say failed → unavailable", async () => {
    const { adapter } = stubbed({ orderid: "65", statuscode: "200", status: "ORDER_COMPLETED" }, { status: 409 });
    expect((await failure(adapter.vend(order()))).message).toContain("HTTP 409");
  });

  test("a redirect is not followed → unavailable (answered)", async () => {
    let redirect: RequestRedirect | undefined;
    const adapter = createClubkonnectProvider(clubkonnectTestConfig, {
      fetch: async (_input, init) => {
        redirect = init.redirect;
        return new Response(null, { status: 302, headers: { location: "https://elsewhere.test/login.asp" } });
      },
    });
    const error = await failure(adapter.vend(order()));
    expect(redirect).toBe("manual");
    expect([error.answered, error.message]).toEqual([true, "clubkonnect: APIAirtimeV1.asp answered HTTP 302"]);
  });

  test.each([apiKey, "k3y+/=&x y"])(
    "a transport error quoting the URL never carries the key (%s) into the message",
    async (key) => {
      const adapter = createClubkonnectProvider(
        { ...clubkonnectTestConfig, apiKey: key },
        {
          fetch: async (input) => {
            throw new TypeError(`fetch failed: ${input} (key ${key})`);
          },
        },
      );
      const error = await failure(adapter.vend(order()));
      expect(error.answered).toBe(false);
      expect(error.message).toContain("APIKey=***&");
      expect(error.message).toEndWith("(key ***)");
      expect(error.message).not.toContain(new URLSearchParams({ APIKey: key }).toString());
    },
  );
});

describe("customer verification", () => {
  test("a known meter: name and address; company, meter and meter type as query parameters", async () => {
    const book = mock();
    book.addCustomer("02", "45031234567", { customer_name: "ADEBAYO OLUWASEUN", address: "12 Allen Avenue, Ikeja" });
    const info = await provider.verifyCustomer({
      service: "electricity",
      network: "ikedc",
      number: "45031234567",
      meterType: "postpaid",
    });
    expect(info).toEqual({ customerName: "ADEBAYO OLUWASEUN", address: "12 Allen Avenue, Ikeja" });
    expect(book.requestsTo("APIVerifyElectricityV1.asp")[0]?.query).toEqual({
      ...credentials,
      ElectricCompany: "02",
      MeterNo: "45031234567",
      MeterType: "02",
    });
  });

  test("a known smartcard", async () => {
    const book = mock();
    book.addCustomer("dstv", "7027914329", { customer_name: "CHIOMA EZE" });
    expect(await provider.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" })).toEqual({
      customerName: "CHIOMA EZE",
      address: null,
    });
    expect(book.requestsTo("APIVerifyCableTVV1.0.asp")[0]?.query).toEqual({
      ...credentials,
      CableTV: "dstv",
      SmartCardNo: "7027914329",
    });
  });

  test.each([
    ["electricity", "ikedc", "INVALID_METERNO"],
    ["cable", "gotv", "INVALID_SMARTCARDNO"],
  ] as const)("an unknown %s customer (%s, %s) → null", async (service, networkName) => {
    const book = mock();
    expect(await provider.verifyCustomer({ service, network: networkName, number: "1234567890" })).toBeNull();
    expect(book.requests).toHaveLength(1);
  });

  test("the not-known word as the status → null", async () => {
    const { adapter } = stubbed({ status: "INVALID_SMARTCARDNO" });
    expect(await adapter.verifyCustomer({ service: "cable", network: "dstv", number: "1" })).toBeNull();
  });

  test("an unknown biller → null without a request", async () => {
    const book = mock();
    expect(await provider.verifyCustomer({ service: "electricity", network: "nowhere", number: "1" })).toBeNull();
    expect(book.requests).toHaveLength(0);
  });

  test.each([
    ["a server error", { kind: "server-error" }, true],
    ["a timeout", { kind: "timeout", delayMs: 2000 }, false],
  ] as const)("%s → unavailable", async (_name, verify, answered) => {
    mock({ verify });
    const error = await failure(fast.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" }));
    expect(error.answered).toBe(answered);
  });

  test("wrong credentials → unavailable, not an unknown customer", async () => {
    mock();
    const misconfigured = createClubkonnectProvider({ ...clubkonnectTestConfig, apiKey: "WRONGKEY" });
    const error = await failure(misconfigured.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" }));
    expect(error.message).toContain("INVALID_CREDENTIALS");
  });
});

describe("balance", () => {
  test("the wallet balance in kobo, from APIWalletBalanceV1.asp with the credentials", async () => {
    const book = mock();
    book.balanceKobo = 1_234_567;
    expect(await provider.balance?.()).toBe(1_234_567);
    expect(book.requestsTo("APIWalletBalanceV1.asp")[0]?.query).toEqual(credentials);
  });

  test.each([
    ["3651.449", 365_145],
    ["1,250.00", 125_000],
    [98.5, 9850],
  ])("balance %j → %d kobo", async (balance, kobo) => {
    expect(await stubbed({ balance }).adapter.balance?.()).toBe(kobo);
  });

  test.each([
    ["wrong credentials", { status: "INVALID_CREDENTIALS" }],
    ["a balance that is no amount", { balance: "N/A" }],
  ])("%s → unavailable", async (_name, answer) => {
    const error = await failure(stubbed(answer).adapter.balance?.() ?? Promise.resolve());
    expect(error.answered).toBe(true);
  });
});

describe("callback query", () => {
  test("names the order by RequestID and order id, with the status it reports", async () => {
    const book = mock({ vend: { kind: "received" } });
    const o = order();
    await provider.vend(o);
    const entry = book.settle(o.reference, "ORDER_COMPLETED");
    expect(readClubkonnectCallback(clubkonnectCallbackQuery(book, o.reference))).toEqual({
      requestId: o.reference,
      orderId: entry.orderId,
      status: "ORDER_COMPLETED",
    });
  });

  test.each([
    [
      { OrderID: " 6501321715 ", Status: "ORDER_CANCELLED" },
      { orderId: "6501321715", status: "ORDER_CANCELLED" },
    ],
    [{ requestid: "txn_abc", statuscode: "100" }, { requestId: "txn_abc" }],
    [{ requestid: "x".repeat(129), orderid: "65" }, { orderId: "65" }],
    [{ orderdate: "22th-Jul-2025", orderstatus: "ORDER_COMPLETED" }, null],
    [{ requestid: "", orderid: "   " }, null],
  ])("%j → %j", (query, expected) => {
    expect(readClubkonnectCallback(query)).toEqual(expected);
  });
});

describe("the fake server (real HTTP on 127.0.0.1)", () => {
  // msw stays out of the way: these requests go over a real socket.
  beforeAll(() => network.disable());
  afterAll(() => network.enable());

  test("a slow order is held as ORDER_RECEIVED meanwhile; a repeat is answered from the book, not booked", async () => {
    const server = startFakeClubkonnectServer({ delayMs: 300 });
    try {
      const live = createClubkonnectProvider({ ...clubkonnectTestConfig, baseUrl: server.url });
      const o = order();
      const vending = live.vend(o);
      await waitUntil(() => server.book.orders.has(o.reference), { what: "the order booked at the fake ClubKonnect" });
      expect((await live.requery(o)).status).toBe("pending");
      expect((await vending).status).toBe("successful");
      expect((await live.vend(o)).status).toBe("successful");
      expect(server.book.ordersSentFor(o.reference)).toHaveLength(2);
      expect(server.book.orders.size).toBe(1);
    } finally {
      server.stop();
    }
  });

  test("while down: HTTP 503 to orders and queries, nothing booked", async () => {
    let down = true;
    const server = startFakeClubkonnectServer({ down: () => down });
    try {
      const live = createClubkonnectProvider({ ...clubkonnectTestConfig, baseUrl: server.url });
      const o = order();
      expect((await failure(live.vend(o))).message).toContain("HTTP 503");
      expect((await failure(live.requery(o))).answered).toBe(true);
      expect(server.book.orders.size).toBe(0);
      down = false;
      expect(await live.requery(o)).toEqual({ status: "not_found" });
      expect((await live.vend(o)).status).toBe("successful");
    } finally {
      server.stop();
    }
  });
});

describe("readClubkonnectConfig through loadConfig", () => {
  const env = {
    CLUBKONNECT_BASE_URL: "https://www.nellobytesystems.test",
    CLUBKONNECT_USER_ID: "CK101264658",
    CLUBKONNECT_API_KEY: "SECRETKEY",
  };

  test("not configured when CLUBKONNECT_BASE_URL is unset", () => {
    expect(loadConfig({ CLUBKONNECT_USER_ID: "CK1", CLUBKONNECT_API_KEY: "K" }).providers.clubkonnect).toBeUndefined();
  });

  test("configured: defaults for the timeout and the callback URL", () => {
    expect(loadConfig(env).providers.clubkonnect).toEqual({
      baseUrl: "https://www.nellobytesystems.test",
      userId: "CK101264658",
      apiKey: "SECRETKEY",
      callbackUrl: undefined,
      timeoutMs: 15_000,
    });
    const configured = loadConfig({
      ...env,
      CLUBKONNECT_CALLBACK_URL: "https://vend.example.test/ck",
      CLUBKONNECT_TIMEOUT_MS: "8000",
    });
    expect(configured.providers.clubkonnect).toMatchObject({ callbackUrl: "https://vend.example.test/ck", timeoutMs: 8000 });
  });

  test.each([
    ["CLUBKONNECT_API_KEY", { CLUBKONNECT_API_KEY: undefined }],
    ["CLUBKONNECT_USER_ID", { CLUBKONNECT_USER_ID: "" }],
    ["CLUBKONNECT_TIMEOUT_MS", { CLUBKONNECT_TIMEOUT_MS: "50" }],
    ["CLUBKONNECT_CALLBACK_URL", { CLUBKONNECT_CALLBACK_URL: "ftp://vend.example.test" }],
  ])("a missing or bad %s is refused, naming it", (variable, change) => {
    expect(() => loadConfig({ ...env, ...change })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, ...change })).toThrow(variable);
  });

  test("its timeout bounds the worker lease", () => {
    expect(() => loadConfig({ ...env, CLUBKONNECT_TIMEOUT_MS: "30000" })).toThrow(/WORKER_LEASE_SECONDS.*CLUBKONNECT_TIMEOUT_MS/);
  });
});
