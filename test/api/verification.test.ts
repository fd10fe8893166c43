import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ledgerEntries, transactions } from "../../src/db/schema/index.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let testKey: string;
let liveKey: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ testKey, liveKey } = await server.createAccount("Verify Ltd"));
}, 60_000); // an in-memory PGlite migrates slowly on a busy machine
afterAll(() => server.close());

const meterPath = "/api/v1/bills/electricity/verify";
const cardPath = "/api/v1/bills/cable/verify";
const verifyMeter = (body: unknown, key = testKey) => server.client(key).post(meterPath, body);
const verifyCard = (body: unknown, key = testKey) => server.client(key).post(cardPath, body);

type Case = [string, Record<string, unknown>, { field: string; message: string }[]];
const discoList = "ikedc, ekedc, aedc, phed, ibedc, kedco, eedc, jed, kaedco, bedc, yedc";
const billerList = "dstv, gotv, startimes, showmax";

const meterCases: Case[] = [
  ["no network", { meter_number: "45031234567" }, [{ field: "network", message: "is required" }]],
  ["no meter", { network: "ikedc" }, [{ field: "meter_number", message: "is required" }]],
  [
    "nothing at all",
    {},
    [
      { field: "network", message: "is required" },
      { field: "meter_number", message: "is required" },
    ],
  ],
  [
    "network and biller disagree",
    { network: "ikedc", biller: "ekedc", meter_number: "45031234567" },
    [
      { field: "network", message: "conflicts with biller" },
      { field: "biller", message: "conflicts with network" },
    ],
  ],
  [
    "meter aliases disagree",
    { network: "ikedc", meter_number: "45031234567", account_number: "45031234568", destination: "45031234567" },
    [
      { field: "meter_number", message: "conflicts with account_number" },
      { field: "account_number", message: "conflicts with meter_number and destination" },
      { field: "destination", message: "conflicts with account_number" },
    ],
  ],
  [
    "10 digits",
    { network: "ikedc", meter_number: "4503123456" },
    [{ field: "meter_number", message: "must be 11 to 13 digits" }],
  ],
  [
    "14 digits",
    { network: "ikedc", destination: "45031234567890" },
    [{ field: "destination", message: "must be 11 to 13 digits" }],
  ],
  [
    "not digits",
    { network: "ikedc", account_number: "4503123456a" },
    [{ field: "account_number", message: "must be 11 to 13 digits" }],
  ],
  [
    "a telecom network",
    { network: "mtn", meter_number: "45031234567" },
    [{ field: "network", message: `must be an electricity distributor (disco): ${discoList}` }],
  ],
  [
    "a cable biller as biller",
    { biller: "dstv", meter_number: "45031234567" },
    [{ field: "biller", message: `must be an electricity distributor (disco): ${discoList}` }],
  ],
  [
    "a bad meter_type",
    { network: "ikedc", meter_number: "45031234567", meter_type: "smart" },
    [{ field: "meter_type", message: "must be one of: prepaid, postpaid" }],
  ],
  [
    "an unknown field",
    { network: "ikedc", meter_number: "45031234567", amount_kobo: 100000 },
    [{ field: "amount_kobo", message: "is not an allowed field" }],
  ],
  ["a number for network", { network: 12, meter_number: "45031234567" }, [{ field: "network", message: "must be a string" }]],
];

const cardCases: Case[] = [
  ["no biller", { smartcard_number: "7031234567" }, [{ field: "network", message: "is required" }]],
  ["no smartcard", { biller: "dstv" }, [{ field: "smartcard_number", message: "is required" }]],
  [
    "network and biller disagree",
    { network: "dstv", biller: "gotv", smartcard_number: "7031234567" },
    [
      { field: "network", message: "conflicts with biller" },
      { field: "biller", message: "conflicts with network" },
    ],
  ],
  [
    "smartcard aliases disagree",
    { biller: "dstv", smartcard_number: "7031234567", destination: "7031234568" },
    [
      { field: "smartcard_number", message: "conflicts with destination" },
      { field: "destination", message: "conflicts with smartcard_number" },
    ],
  ],
  [
    "9 digits",
    { biller: "dstv", smartcard_number: "703123456" },
    [{ field: "smartcard_number", message: "must be 10 to 12 digits" }],
  ],
  [
    "13 digits",
    { biller: "dstv", account_number: "7031234567890" },
    [{ field: "account_number", message: "must be 10 to 12 digits" }],
  ],
  ["not digits", { biller: "dstv", destination: "70312-34567" }, [{ field: "destination", message: "must be 10 to 12 digits" }]],
  [
    "a disco",
    { network: "ikedc", smartcard_number: "7031234567" },
    [{ field: "network", message: `must be a cable TV biller: ${billerList}` }],
  ],
  [
    "an unknown biller",
    { biller: "canalplus", smartcard_number: "7031234567" },
    [{ field: "biller", message: `must be a cable TV biller: ${billerList}` }],
  ],
  [
    "meter_type (a meter field)",
    { biller: "dstv", smartcard_number: "7031234567", meter_type: "prepaid" },
    [{ field: "meter_type", message: "is not an allowed field" }],
  ],
];

describe.each([
  ["POST /api/v1/bills/electricity/verify", verifyMeter, meterCases],
  ["POST /api/v1/bills/cable/verify", verifyCard, cardCases],
] as const)("%s validation", (_, verify, cases) => {
  test.each(cases)("%s is 400 with exactly these errors", async (_label, body, errors) => {
    const res = await verify(body);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors).toEqual(errors);
  });

  test.each(cases)("%s is 400 for a live key too (validation comes before routing)", async (_label, body) => {
    expect((await verify(body, liveKey)).status).toBe(400);
  });
});

describe("POST /api/v1/bills/electricity/verify", () => {
  test("returns the sandbox customer, masked meter and the product's minimum", async () => {
    const res = await verifyMeter({ network: "ikedc", meter_number: "45031234567", meter_type: "prepaid" });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({
      network: "ikedc",
      meter_number: "4503****567",
      meter_type: "prepaid",
      min_amount_kobo: 100000,
    });
    expect(res.json.data.customer_name).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(res.json.data.address).toEndWith("Ikeja, Lagos");
    expect(res.text).not.toContain("45031234567");
  });

  test("aliases give the same answer; equal aliases are fine; meter_type defaults to prepaid", async () => {
    const canonical = await verifyMeter({ network: "ekedc", meter_number: "1234567890123" });
    expect(canonical.json.data.meter_type).toBe("prepaid");
    expect(canonical.json.data.meter_number).toBe("1234******123");
    for (const body of [
      { biller: "ekedc", account_number: "1234567890123" },
      { network: "ekedc", biller: "ekedc", destination: "1234567890123", meter_number: "1234567890123" },
    ]) {
      const res = await verifyMeter(body);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual(canonical.json.data);
    }
  });

  test("the same meter gives the same customer; different meters give different ones", async () => {
    const meters = ["45031234567", "45031234568", "45031234569", "62011122233", "71234567891", "1029384756"];
    const first = await Promise.all(meters.slice(0, 5).map((m) => verifyMeter({ network: "aedc", meter_number: m })));
    const again = await Promise.all(meters.slice(0, 5).map((m) => verifyMeter({ network: "aedc", meter_number: m })));
    expect(again.map((r) => r.json.data)).toEqual(first.map((r) => r.json.data));
    expect(new Set(first.map((r) => r.json.data.customer_name)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(first.map((r) => r.json.data.address)).size).toBeGreaterThanOrEqual(4);
  });

  test("min_amount_kobo comes from the disco's product for the meter type", async () => {
    const edited = await server.admin.request("PATCH", "/admin/v1/products/bedc-postpaid", { min_amount_kobo: 150000 });
    expect(edited.status).toBe(200);
    const postpaid = await verifyMeter({ network: "bedc", meter_number: "45031234567", meter_type: "postpaid" });
    expect(postpaid.json.data).toMatchObject({ meter_type: "postpaid", min_amount_kobo: 150000 });
    const prepaid = await verifyMeter({ network: "bedc", meter_number: "45031234567" });
    expect(prepaid.json.data.min_amount_kobo).toBe(100000);
  });

  test("a meter type the disco no longer sells is 400 naming meter_type", async () => {
    await server.admin.request("PATCH", "/admin/v1/products/yedc-postpaid", { active: false });
    const res = await verifyMeter({ network: "yedc", meter_number: "45031234567", meter_type: "postpaid" });
    expect(res.status).toBe(400);
    expect(res.json.data.errors).toEqual([{ field: "meter_type", message: "postpaid meters are not sold at yedc" }]);
  });

  test("a meter ending in 0000 is 404 CUSTOMER_NOT_FOUND naming the masked meter and the disco", async () => {
    const res = await verifyMeter({ network: "ikedc", meter_number: "45031230000" });
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("CUSTOMER_NOT_FOUND");
    expect(res.json.message).toBe("No customer found for meter 4503****000 at Ikeja Electric (ikedc)");
    expect(res.json.data).toBeNull();
  });

  test("a live key is 503 NO_ROUTE", async () => {
    const res = await verifyMeter({ network: "ikedc", meter_number: "45031234567" }, liveKey);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("NO_ROUTE");
    expect(res.json.message).toBe("No provider route for live verification at ikedc");
  });

  test("needs an API key", async () => {
    expect((await server.anonymous.post(meterPath, { network: "ikedc", meter_number: "45031234567" })).status).toBe(401);
  });
});

describe("POST /api/v1/bills/cable/verify", () => {
  test("returns the customer, a bouquet of that biller and an ISO due date; the card is masked", async () => {
    const bouquets = await server.client(testKey).get("/api/v1/catalogue/products", { query: { network: "gotv" } });
    const names = bouquets.json.data.map((p: { name: string }) => p.name);
    const res = await verifyCard({ biller: "gotv", smartcard_number: "7031234567" });
    expect(res.status).toBe(200);
    expect(res.json.data.biller).toBe("gotv");
    // The deprecated alias keeps clients that read `network` working.
    expect(res.json.data.network).toBe("gotv");
    expect(res.json.data.smartcard_number).toBe("7031***567");
    expect(res.json.data.customer_name).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(names).toContain(res.json.data.current_bouquet);
    expect(res.json.data.due_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(Number.isNaN(Date.parse(res.json.data.due_date))).toBe(false);
    expect(res.text).not.toContain("7031234567");
  });

  test("deterministic per smartcard; different cards, different customers", async () => {
    const cards = ["7031234567", "7031234568", "70312345679", "123456789012", "4455667788"];
    const first = await Promise.all(cards.map((c) => verifyCard({ network: "dstv", account_number: c })));
    const again = await Promise.all(cards.map((c) => verifyCard({ biller: "dstv", destination: c })));
    expect(again.map((r) => r.json.data)).toEqual(first.map((r) => r.json.data));
    expect(new Set(first.map((r) => r.json.data.customer_name)).size).toBeGreaterThanOrEqual(4);
  });

  test("a smartcard ending in 0000 is 404 CUSTOMER_NOT_FOUND", async () => {
    const res = await verifyCard({ biller: "startimes", smartcard_number: "7031230000" });
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("CUSTOMER_NOT_FOUND");
    expect(res.json.message).toBe("No customer found for smartcard 7031***000 at StarTimes (startimes)");
  });

  test("a live key is 503 NO_ROUTE", async () => {
    const res = await verifyCard({ biller: "showmax", smartcard_number: "7031234567" }, liveKey);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("NO_ROUTE");
    expect(res.json.message).toBe("No provider route for live verification at showmax");
  });
});

test("verification never charges: no transaction, no ledger entry", async () => {
  await verifyMeter({ network: "ikedc", meter_number: "45031234567" });
  await verifyCard({ biller: "dstv", smartcard_number: "7031234567" });
  expect(await server.deps.db.select().from(transactions)).toEqual([]);
  expect(await server.deps.db.select().from(ledgerEntries)).toEqual([]);
});
