import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readElectricityResult } from "../../src/providers/readings.ts";
import { ProviderUnavailableError } from "../../src/providers/types.ts";
import { translateVtuCallback } from "../../src/providers/vtu/callbacks.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { buildVtuPayRequest, defaultCustomerPhone } from "../../src/providers/vtu/mapping.ts";
import { providerOrders } from "../helpers/provider-orders.ts";
import {
  setupMockFetch,
  VtuBook,
  type VtuMockOptions,
  vtuCallbackBody,
  vtuHandlers,
  vtuTestConfig,
} from "../helpers/vtu-mock.ts";

const network = setupMockFetch();
beforeAll(() => network.enable());
afterEach(() => network.resetHandlers());
afterAll(() => network.disable());

const provider = createVtuProvider(vtuTestConfig);
const order = providerOrders("vtutest");

function mock(options: Omit<VtuMockOptions, "book"> = {}): VtuBook {
  const book = new VtuBook();
  network.use(...vtuHandlers({ book, ...options }));
  return book;
}

function onlyPayBody(book: VtuBook): unknown {
  const pays = book.requestsTo("pay");
  expect(pays).toHaveLength(1);
  return pays[0]?.body;
}

describe("pay: one success per service, and what was sent", () => {
  test("airtime: serviceID is the network, amount in naira, headers carry both keys", async () => {
    const book = mock({ pay: { kind: "deliver" } });
    const o = order({ amountKobo: 123_456 });
    const outcome = await provider.vend(o);
    expect(outcome).toEqual({ status: "successful", providerReference: expect.stringMatching(/^1700\d{12}$/) });
    const [request] = book.requestsTo("pay");
    expect(request?.headers["api-key"]).toBe(vtuTestConfig.apiKey);
    expect(request?.headers["secret-key"]).toBe(vtuTestConfig.secretKey);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.body).toEqual({
      request_id: o.reference,
      serviceID: "mtn",
      billersCode: "08031234567",
      amount: 1234.56,
      phone: "08031234567",
    });
  });

  test("9mobile airtime is sold as etisalat", async () => {
    const book = mock({ pay: { kind: "deliver" } });
    await provider.vend(order({ network: "9mobile", productCode: "9mobile-airtime", destination: "08091234567" }));
    expect(onlyPayBody(book)).toMatchObject({ serviceID: "etisalat", amount: 500, phone: "08091234567" });
  });

  test.each([
    ["mtn", "mtn-data-1gb-1d", "mtn-data"],
    ["airtel", "airtel-data-2gb-30d", "airtel-data"],
    ["glo", "glo-data-5gb-30d", "glo-data"],
    ["9mobile", "9mobile-data-1gb-1d", "etisalat-data"],
  ])("data on %s: variation %s under serviceID %s, billersCode is the phone", async (network, productCode, serviceID) => {
    const book = mock({ pay: { kind: "deliver" } });
    const o = order({ service: "data", network, productCode, amountKobo: 150_000, requestedMb: 2048 });
    const outcome = await provider.vend(o);
    expect(outcome.status).toBe("successful");
    expect(onlyPayBody(book)).toEqual({
      request_id: o.reference,
      serviceID,
      billersCode: "08031234567",
      variation_code: productCode,
      amount: 1500,
      phone: "08031234567",
    });
  });

  test("electricity: disco serviceID, meter type, customer phone; token, units and receipt come back", async () => {
    const book = mock({ pay: { kind: "deliver" } });
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
    expect(onlyPayBody(book)).toEqual({
      request_id: o.reference,
      serviceID: "ikeja-electric",
      billersCode: "45031234567",
      variation_code: "prepaid",
      amount: 5000,
      phone: "08051234567",
    });
    expect(outcome).toEqual({
      status: "successful",
      providerReference: expect.any(String),
      result: {
        token: expect.stringMatching(/^\d{4}(-\d{4}){4}$/),
        units: "12.5 kWh",
        receipt_number: expect.stringMatching(/^RCPT/),
      },
    });
  });

  test("electricity postpaid without a phone: the meter type follows the product, the phone defaults", async () => {
    const book = mock({ pay: { kind: "deliver", extras: {} } });
    const outcome = await provider.vend(
      order({ service: "electricity", network: "aedc", productCode: "aedc-postpaid", destination: "0101150251911" }),
    );
    expect(outcome).toEqual({ status: "successful", providerReference: expect.any(String) });
    expect(onlyPayBody(book)).toMatchObject({
      serviceID: "abuja-electric",
      variation_code: "postpaid",
      phone: defaultCustomerPhone,
    });
  });

  test.each([
    ["ikedc", "ikeja-electric"],
    ["ekedc", "eko-electric"],
    ["aedc", "abuja-electric"],
    ["phed", "portharcourt-electric"],
    ["ibedc", "ibadan-electric"],
    ["kedco", "kano-electric"],
    ["eedc", "enugu-electric"],
    ["jed", "jos-electric"],
    ["kaedco", "kaduna-electric"],
    ["bedc", "benin-electric"],
    ["yedc", "yola-electric"],
  ])("disco %s → %s", (network, serviceID) => {
    const request = buildVtuPayRequest(order({ service: "electricity", network, productCode: `${network}-prepaid` }));
    expect(request?.serviceID).toBe(serviceID);
  });

  test.each([
    ["dstv", "dstv-compact"],
    ["gotv", "gotv-max"],
    ["startimes", "startimes-nova"],
    ["showmax", "showmax-mobile"],
  ])("cable %s: the bouquet code %s as variation, the smartcard as billersCode", async (network, productCode) => {
    const book = mock({ pay: { kind: "deliver" } });
    const o = order({ service: "cable", network, productCode, destination: "7027914329", phoneNumber: "08031112222" });
    const outcome = await provider.vend(o);
    expect(outcome).toEqual({ status: "successful", providerReference: expect.any(String) });
    expect(onlyPayBody(book)).toEqual({
      request_id: o.reference,
      serviceID: network,
      billersCode: "7027914329",
      variation_code: productCode,
      amount: 500,
      phone: "08031112222",
      subscription_type: "change",
    });
  });

  test("a product this provider does not sell fails without a request", async () => {
    const book = mock();
    const outcome = await provider.vend(order({ network: "ntel", productCode: "ntel-airtime" }));
    expect(outcome).toEqual({ status: "failed", message: "VTU sells no airtime for ntel" });
    expect(book.requests).toHaveLength(0);
  });
});

describe("electricity results", () => {
  test.each([
    [
      { purchased_code: "Token : 1234-5678-9012-3456-7890 Units: 12.5kWh" },
      { token: "1234-5678-9012-3456-7890", units: "12.5 kWh" },
    ],
    [{ purchased_code: "Token : 42167939614833582071 : 22.2 kWh" }, { token: "42167939614833582071", units: "22.2 kWh" }],
    [{ purchased_code: "TOKEN: 1234 5678 9012 3456 7890, UNITS: 7" }, { token: "1234 5678 9012 3456 7890", units: "7 kWh" }],
    [
      { purchased_code: "Token : 1111-2222-3333-4444-5555", mainToken: "42167939614833582071", mainTokenUnits: 22.2 },
      { token: "42167939614833582071", units: "22.2 kWh" },
    ],
    [
      { token: "Token : 5555 6666 7777 8888 9999", units: "3.4 kWh", receiptNumber: "R-889" },
      { token: "5555 6666 7777 8888 9999", units: "3.4 kWh", receipt_number: "R-889" },
    ],
    [
      { Token: "12345678901234567890", Units: 40, exchangeReference: "0000013" },
      { token: "12345678901234567890", units: "40 kWh", receipt_number: "0000013" },
    ],
    [{ purchased_code: "" }, undefined],
    [{ purchased_code: "Thank you for your purchase" }, undefined],
    [{ purchased_code: 12, token: null, units: { kwh: 3 } }, undefined],
  ])("%j → %j", (answer, expected) => {
    expect(readElectricityResult(answer)).toEqual(expected);
  });
});

describe("pay: declines are failures", () => {
  test("code 016, status failed → failed with the provider's description", async () => {
    const book = mock({ pay: { kind: "fail", description: "TRANSACTION FAILED: METER NOT FOUND" } });
    const o = order();
    expect(await provider.vend(o)).toEqual({
      status: "failed",
      providerReference: expect.any(String),
      message: "TRANSACTION FAILED: METER NOT FOUND",
      failureCode: "provider_refused",
    });
    // The same failure read by a re-query: the provider had the order and did not deliver it.
    expect(await provider.requery(o)).toMatchObject({
      status: "failed",
      message: "TRANSACTION FAILED",
      failureCode: "not_delivered",
    });
    expect(book.requestsTo("requery")).toHaveLength(1);
  });

  test.each([
    ["018", "LOW WALLET BALANCE", 200, "insufficient_provider_float"],
    ["013", "BELOW MINIMUM AMOUNT ALLOWED", 200, "provider_refused"],
    ["011", "INVALID ARGUMENTS", 400, "provider_refused"],
  ] as const)("refusal %s (%s, HTTP %d) → failed (%s)", async (code, description, httpStatus, failureCode) => {
    mock({ pay: { kind: "refuse", code, description, httpStatus } });
    expect(await provider.vend(order())).toEqual({ status: "failed", message: description, failureCode });
  });

  test("wrong credentials on pay: HTTP 401 with code 087 → failed", async () => {
    mock();
    const misconfigured = createVtuProvider({ ...vtuTestConfig, secretKey: "wrong" });
    expect(await misconfigured.vend(order())).toEqual({
      status: "failed",
      message: "INVALID CREDENTIALS",
      failureCode: "provider_refused",
    });
  });

  test("wrong credentials on requery say nothing about the order → unavailable", async () => {
    mock();
    const misconfigured = createVtuProvider({ ...vtuTestConfig, apiKey: "wrong" });
    await expect(misconfigured.requery(order())).rejects.toThrow(ProviderUnavailableError);
  });
});

describe("pending orders resolve by requery", () => {
  test("099 → pending; requery pending; the provider delivers; requery successful with the token", async () => {
    const book = mock({ pay: { kind: "processing" } });
    const o = order({ service: "electricity", network: "ekedc", productCode: "ekedc-prepaid", destination: "45031234567" });
    expect(await provider.vend(o)).toEqual({ status: "pending", message: "TRANSACTION IS PROCESSING" });
    expect(await provider.requery(o)).toMatchObject({ status: "pending", providerReference: expect.any(String) });
    book.settle(o.reference, "delivered");
    expect(await provider.requery(o)).toEqual({
      status: "successful",
      providerReference: expect.any(String),
      result: { token: expect.any(String), units: "12.5 kWh", receipt_number: expect.any(String) },
    });
    expect(book.requestsTo("requery").map((r) => r.body)).toEqual([{ request_id: o.reference }, { request_id: o.reference }]);
  });

  test("000 with status initiated → pending carrying the transaction id; reversed later → failed", async () => {
    const book = mock({ pay: { kind: "initiated" } });
    const o = order();
    const outcome = await provider.vend(o);
    expect(outcome).toEqual({ status: "pending", providerReference: expect.any(String), message: "TRANSACTION PROCESSED" });
    book.settle(o.reference, "reversed");
    expect(await provider.requery(o)).toMatchObject({ status: "failed", message: "TRANSACTION REVERSED" });
  });

  test("a resend of a request id the provider holds (014) → pending, not failed", async () => {
    mock({ pay: { kind: "deliver" } });
    const o = order();
    expect((await provider.vend(o)).status).toBe("successful");
    expect(await provider.vend(o)).toEqual({ status: "pending", message: "REQUEST ID ALREADY EXIST" });
  });

  test("requery of a request the provider never received → not_found", async () => {
    mock();
    expect(await provider.requery(order())).toEqual({ status: "not_found" });
  });
});

describe("unknown fate: ProviderUnavailableError, then requery", () => {
  test("timeout: the order was delivered all the same and requery finds it", async () => {
    const book = mock({ pay: { kind: "timeout", outcome: "delivered", delayMs: 5000 } });
    const fast = createVtuProvider({ ...vtuTestConfig, timeoutMs: 100 });
    const o = order();
    const started = performance.now();
    const error = await fast.vend(o).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(String(error)).toContain("timed out after 100 ms");
    const found = await fast.requery(o);
    expect(found).toEqual({ status: "successful", providerReference: book.transactions.get(o.reference)?.transactionId ?? "" });
  });

  test.each([502, 503, 500])("HTTP %d: unavailable; requery finds it successful", async (httpStatus) => {
    mock({ pay: { kind: "server-error", httpStatus, outcome: "delivered" } });
    const o = order();
    await expect(provider.vend(o)).rejects.toThrow(`/api/pay answered HTTP ${httpStatus}`);
    expect((await provider.requery(o)).status).toBe("successful");
  });

  test("a dropped connection whose order never arrived: unavailable, then not_found", async () => {
    mock({ pay: { kind: "network-error", outcome: "not-received" } });
    const o = order();
    await expect(provider.vend(o)).rejects.toThrow(ProviderUnavailableError);
    expect(await provider.requery(o)).toEqual({ status: "not_found" });
  });

  test.each([
    ["malformed JSON", { kind: "malformed", outcome: "failed" }, "failed"],
    ["a JSON body of another shape", { kind: "wrong-shape", outcome: "pending" }, "pending"],
  ] as const)("%s: unavailable; requery tells the truth", async (_name, pay, truth) => {
    mock({ pay });
    const o = order();
    await expect(provider.vend(o)).rejects.toThrow(ProviderUnavailableError);
    expect((await provider.requery(o)).status).toBe(truth);
  });

  test.each([
    ["timeout", { kind: "timeout", delayMs: 2000 }],
    ["server error", { kind: "server-error" }],
    ["network error", { kind: "network-error" }],
    ["malformed", { kind: "malformed" }],
    ["wrong shape", { kind: "wrong-shape" }],
  ] as const)("requery %s → unavailable", async (_name, requery) => {
    mock({ requery });
    const fast = createVtuProvider({ ...vtuTestConfig, timeoutMs: 100 });
    await expect(fast.requery(order())).rejects.toThrow(ProviderUnavailableError);
  });

  test.each([
    ["an unknown code", { code: "083", response_description: "SYSTEM ERROR" }],
    ["code 000 without transactions", { code: "000", content: {}, response_description: "TRANSACTION PROCESSED" }],
    ["content that is a list", { code: "000", content: [{ transactions: { status: "delivered" } }] }],
    [
      "an answer about another request",
      { code: "000", requestId: "txn_other", content: { transactions: { status: "delivered" } } },
    ],
    ["a JSON array", [1, 2, 3]],
    ["a JSON string", "000"],
    ["a code that is not a code", { code: true, content: { transactions: { status: "delivered" } } }],
  ])("an answer with %s → unavailable", async (_name, answer) => {
    const fakeFetch = async () => Response.json(answer);
    const stubbed = createVtuProvider(vtuTestConfig, { fetch: fakeFetch });
    await expect(stubbed.vend(order())).rejects.toThrow(ProviderUnavailableError);
    await expect(stubbed.requery(order())).rejects.toThrow(ProviderUnavailableError);
  });

  test("a 4xx that does not say failed → unavailable", async () => {
    const fakeFetch = async () =>
      Response.json({ code: "000", content: { transactions: { status: "delivered" } } }, { status: 409 });
    await expect(createVtuProvider(vtuTestConfig, { fetch: fakeFetch }).vend(order())).rejects.toThrow("HTTP 409");
  });

  test("a redirect → unavailable", async () => {
    const fakeFetch = async () => new Response(null, { status: 302, headers: { location: "https://elsewhere.test" } });
    await expect(createVtuProvider(vtuTestConfig, { fetch: fakeFetch }).vend(order())).rejects.toThrow("HTTP 302");
  });
});

describe("merchant-verify", () => {
  test("a known meter: name and address; the meter type goes as type", async () => {
    const book = mock();
    book.addCustomer("ikeja-electric", "45031234567", { Customer_Name: "ADEBAYO OLUWASEUN", Address: "12 Allen Avenue, Ikeja" });
    const info = await provider.verifyCustomer({
      service: "electricity",
      network: "ikedc",
      number: "45031234567",
      meterType: "postpaid",
    });
    expect(info).toEqual({
      customerName: "ADEBAYO OLUWASEUN",
      address: "12 Allen Avenue, Ikeja",
      currentBouquet: null,
      dueDate: null,
    });
    expect(book.requestsTo("merchant-verify")[0]?.body).toEqual({
      billersCode: "45031234567",
      serviceID: "ikeja-electric",
      type: "postpaid",
    });
  });

  test("a known smartcard: bouquet and due date", async () => {
    const book = mock();
    book.addCustomer("dstv", "7027914329", {
      Customer_Name: "CHIOMA EZE",
      Current_Bouquet: "DStv Compact",
      Due_Date: "2025-08-30T00:00:00",
    });
    expect(await provider.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" })).toEqual({
      customerName: "CHIOMA EZE",
      address: null,
      currentBouquet: "DStv Compact",
      dueDate: "2025-08-30T00:00:00",
    });
    expect(book.requestsTo("merchant-verify")[0]?.body).toEqual({ billersCode: "7027914329", serviceID: "dstv" });
  });

  test("WrongBillersCode → null", async () => {
    mock();
    expect(await provider.verifyCustomer({ service: "cable", network: "gotv", number: "1234567890" })).toBeNull();
  });

  test.each([
    ["an error text", { code: "000", content: { error: "Meter not found", Customer_Name: "" } }],
    ["no name", { code: "000", content: { WrongBillersCode: false } }],
    ["WrongBillersCode as text", { code: "000", content: { Customer_Name: "X", WrongBillersCode: "true" } }],
  ])("%s → null", async (_name, answer) => {
    const stubbed = createVtuProvider(vtuTestConfig, { fetch: async () => Response.json(answer) });
    expect(await stubbed.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" })).toBeNull();
  });

  test("an unknown biller → null without a request", async () => {
    const book = mock();
    expect(await provider.verifyCustomer({ service: "electricity", network: "nowhere", number: "1" })).toBeNull();
    expect(book.requests).toHaveLength(0);
  });

  test.each([
    ["a server error", { kind: "server-error" }],
    ["garbage", { kind: "wrong-shape" }],
  ] as const)("%s → unavailable", async (_name, verify) => {
    mock({ verify });
    await expect(provider.verifyCustomer({ service: "cable", network: "dstv", number: "7027914329" })).rejects.toThrow(
      ProviderUnavailableError,
    );
  });
});

describe("translateVtuCallback", () => {
  test("delivered electricity → successful with token, units, receipt; repeats share the event id", async () => {
    const book = mock({ pay: { kind: "processing" } });
    const o = order({ service: "electricity", network: "phed", productCode: "phed-prepaid", destination: "45031234567" });
    await provider.vend(o);
    const entry = book.settle(o.reference, "delivered");
    const body = vtuCallbackBody(book, o.reference);
    const translated = translateVtuCallback(body);
    expect(translated).toEqual({
      event_id: `vtu:${o.reference}:successful`,
      reference: o.reference,
      status: "successful",
      provider_reference: entry.transactionId,
      token: expect.stringMatching(/^\d{4}(-\d{4}){4}$/),
      units: "12.5 kWh",
      receipt_number: expect.any(String),
    });
    expect(translateVtuCallback(JSON.parse(JSON.stringify(body)))?.event_id).toBe(translated?.event_id ?? "");
  });

  test.each(["failed", "reversed"] as const)("%s → failed with the description", async (status) => {
    const book = mock({ pay: { kind: "processing" } });
    const o = order();
    await provider.vend(o);
    const entry = book.settle(o.reference, status);
    expect(translateVtuCallback(vtuCallbackBody(book, o.reference))).toEqual({
      event_id: `vtu:${o.reference}:failed`,
      reference: o.reference,
      status: "failed",
      provider_reference: entry.transactionId,
      message: status === "failed" ? "TRANSACTION FAILED" : "TRANSACTION REVERSED",
    });
  });

  test("a failure without a transaction id falls back to the reference", () => {
    const body = { type: "transaction-update", data: { code: "016", requestId: "txn_abc", response_description: "FAILED" } };
    expect(translateVtuCallback(body)).toEqual({
      event_id: "vtu:txn_abc:failed",
      reference: "txn_abc",
      status: "failed",
      provider_reference: "txn_abc",
      message: "FAILED",
    });
  });

  const delivered = {
    code: "000",
    requestId: "txn_abc",
    content: { transactions: { status: "delivered", transactionId: "17" } },
  };
  test.each([
    [
      "a pending update",
      { type: "transaction-update", data: { ...delivered, content: { transactions: { status: "pending" } } } },
    ],
    ["a processing code", { type: "transaction-update", data: { code: "099", requestId: "txn_abc" } }],
    ["another event type", { type: "wallet-funded", data: delivered }],
    ["no requestId", { type: "transaction-update", data: { ...delivered, requestId: undefined } }],
    ["a reference too long", { type: "transaction-update", data: { ...delivered, requestId: "x".repeat(65) } }],
    ["an unknown code", { type: "transaction-update", data: { ...delivered, code: "083" } }],
    ["data that is a string", { type: "transaction-update", data: "delivered" }],
    ["null", null],
    ["an array", [delivered]],
  ])("%s → null", (_name, body) => {
    expect(translateVtuCallback(body)).toBeNull();
  });
});
