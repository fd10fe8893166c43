import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer();
  client = (await fundedAccount(server, 100_000_000)).client;
});
afterAll(() => server.close());

type Case = [string, Record<string, unknown>, { field: string; message?: string | RegExp }[]];

async function expectRefused(path: string, body: Record<string, unknown>, expected: Case[2]) {
  const res = await client.post(path, body, idem());
  expect(res.status).toBe(400);
  expect(res.json.code).toBe("VALIDATION_FAILED");
  const errors: { field: string; message: string }[] = res.json.data.errors;
  for (const want of expected) {
    const match = errors.find(
      (e) =>
        e.field === want.field &&
        (want.message === undefined ||
          (typeof want.message === "string" ? e.message === want.message : want.message.test(e.message))),
    );
    expect({ missing: want, got: errors, matched: Boolean(match) }).toMatchObject({ matched: true });
  }
  return res;
}

const airtime = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10000 };

describe("POST /api/v1/vend refuses bad input with 400 naming the field", () => {
  const cases: Case[] = [
    ["unknown field", { ...airtime, colour: "red" }, [{ field: "colour", message: "is not an allowed field" }]],
    [
      "no product code",
      { phone_number: "08031234567", amount_kobo: 10000 },
      [{ field: "product_code", message: /^is required/ }],
    ],
    [
      "no phone number",
      { product_code: "mtn-airtime", amount_kobo: 10000 },
      [{ field: "phone_number", message: /^is required/ }],
    ],
    ["product aliases disagree", { ...airtime, serviceid: "glo-airtime" }, [{ field: "serviceid" }, { field: "product_code" }]],
    [
      "phone aliases disagree",
      { ...airtime, receiver_phone_number: "08039999999" },
      [{ field: "receiver_phone_number" }, { field: "phone_number" }],
    ],
    ["amount aliases disagree", { ...airtime, amount: 20000 }, [{ field: "amount_kobo" }, { field: "amount" }]],
    ["not a Nigerian phone", { ...airtime, phone_number: "12345" }, [{ field: "phone_number", message: /Nigerian phone/ }]],
    [
      "phone alias named in the error",
      { product_code: "mtn-airtime", destination: "0803123", amount_kobo: 10000 },
      [{ field: "destination" }],
    ],
    [
      "unknown product",
      { ...airtime, product_code: "mtn-airtime-gold" },
      [{ field: "product_code", message: /not a known product/ }],
    ],
    [
      "electricity product on /vend",
      { ...airtime, product_code: "ikedc-prepaid", amount_kobo: 100000 },
      [{ field: "product_code", message: /electricity product/ }],
    ],
    [
      "airtime without amount",
      { product_code: "mtn-airtime", phone_number: "08031234567" },
      [{ field: "amount_kobo", message: /is required/ }],
    ],
    ["airtime below ₦50", { ...airtime, amount_kobo: 4999 }, [{ field: "amount_kobo", message: /between 5000 and 5000000/ }]],
    [
      "airtime above ₦50,000",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount: 5000001 },
      [{ field: "amount", message: /between 5000 and 5000000/ }],
    ],
    [
      "bundle with another amount",
      { product_code: "mtn-data-1gb-1d", phone_number: "08031234567", amount_kobo: 40000 },
      [{ field: "amount_kobo", message: /fixed price/ }],
    ],
    ["network disagrees with product", { ...airtime, network: "glo" }, [{ field: "network", message: /does not match/ }]],
    ["amount not an integer", { ...airtime, amount_kobo: 100.5 }, [{ field: "amount_kobo", message: "must be a whole number" }]],
    ["amount as string", { ...airtime, amount_kobo: "10000" }, [{ field: "amount_kobo" }]],
    ["client_reference over 128", { ...airtime, client_reference: "x".repeat(129) }, [{ field: "client_reference" }]],
    [
      "metadata over 20 values",
      { ...airtime, metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])) },
      [{ field: "metadata" }],
    ],
    [
      "metadata value not a string",
      { ...airtime, metadata: { order: 42 } },
      [{ field: "metadata.order", message: "must be a string" }],
    ],
    ["metadata key over 40 characters", { ...airtime, metadata: { ["k".repeat(41)]: "v" } }, [{ field: "metadata" }]],
    ["metadata value over 500 characters", { ...airtime, metadata: { note: "v".repeat(501) } }, [{ field: "metadata.note" }]],
  ];
  test.each(cases)("%s", async (_label, body, expected) => {
    await expectRefused("/api/v1/vend", body, expected);
  });

  test("Idempotency-Key missing or over 128 characters", async () => {
    for (const headers of [{}, { "idempotency-key": "k".repeat(129) }] as Record<string, string>[]) {
      const res = await client.post("/api/v1/vend", airtime, { headers });
      expect(res.status).toBe(400);
      expect(res.json.data.errors.map((e: { field: string }) => e.field)).toEqual(["Idempotency-Key"]);
    }
  });

  test("a 400 is not stored: the same key then succeeds", async () => {
    const { headers } = idem();
    expect((await client.post("/api/v1/vend", { ...airtime, amount_kobo: 1 }, { headers })).status).toBe(400);
    expect((await client.post("/api/v1/vend", airtime, { headers })).status).toBe(202);
  });
});

const electricity = { network: "ikedc", meter_number: "45031234567", amount_kobo: 100000 };

describe("POST /api/v1/bills/electricity refuses bad input with 400 naming the field", () => {
  const cases: Case[] = [
    ["unknown field", { ...electricity, token: "x" }, [{ field: "token", message: "is not an allowed field" }]],
    ["no network", { meter_number: "45031234567", amount_kobo: 100000 }, [{ field: "network", message: /^is required/ }]],
    ["no meter", { network: "ikedc", amount_kobo: 100000 }, [{ field: "meter_number", message: /^is required/ }]],
    ["no amount", { network: "ikedc", meter_number: "45031234567" }, [{ field: "amount_kobo", message: /is required/ }]],
    ["amount below 100000", { ...electricity, amount_kobo: 99999 }, [{ field: "amount_kobo" }]],
    ["alias amount below 100000", { network: "ikedc", meter_number: "45031234567", amount: 99999 }, [{ field: "amount" }]],
    ["network and biller disagree", { ...electricity, biller: "ekedc" }, [{ field: "network" }, { field: "biller" }]],
    [
      "meter aliases disagree",
      { ...electricity, account_number: "45031234568" },
      [{ field: "meter_number" }, { field: "account_number" }],
    ],
    [
      "meter too short",
      { ...electricity, meter_number: "4503123456" },
      [{ field: "meter_number", message: "must be 11 to 13 digits" }],
    ],
    ["meter not digits", { ...electricity, meter_number: "4503123456X" }, [{ field: "meter_number" }]],
    ["bad meter_type", { ...electricity, meter_type: "smart" }, [{ field: "meter_type" }]],
    ["not a disco", { ...electricity, network: "mtn" }, [{ field: "network", message: /not a known product/ }]],
    [
      "product of another disco",
      { ...electricity, product_code: "ekedc-prepaid" },
      [{ field: "network", message: /does not match/ }],
    ],
    [
      "meter_type disagrees with product",
      { ...electricity, product_code: "ikedc-postpaid", meter_type: "prepaid" },
      [{ field: "meter_type" }],
    ],
    ["bad phone", { ...electricity, phone_number: "0803" }, [{ field: "phone_number" }]],
  ];
  test.each(cases)("%s", async (_label, body, expected) => {
    await expectRefused("/api/v1/bills/electricity", body, expected);
  });
});

const cable = { biller: "dstv", smartcard_number: "7031234567", product_code: "dstv-padi" };

describe("POST /api/v1/bills/cable (unknown fields refused here too)", () => {
  const cases: Case[] = [
    ["unknown field", { ...cable, bouquet: "padi" }, [{ field: "bouquet", message: "is not an allowed field" }]],
    ["no biller", { smartcard_number: "7031234567", product_code: "dstv-padi" }, [{ field: "network", message: /^is required/ }]],
    ["no smartcard", { biller: "dstv", product_code: "dstv-padi" }, [{ field: "smartcard_number", message: /^is required/ }]],
    ["no bouquet", { biller: "dstv", smartcard_number: "7031234567" }, [{ field: "product_code", message: /^is required/ }]],
    [
      "smartcard too short",
      { ...cable, smartcard_number: "703123456" },
      [{ field: "smartcard_number", message: "must be 10 to 12 digits" }],
    ],
    ["bouquet of another biller", { ...cable, product_code: "gotv-max" }, [{ field: "biller", message: /does not match/ }]],
    ["amount differs from the bouquet price", { ...cable, amount_kobo: 100 }, [{ field: "amount_kobo", message: /fixed price/ }]],
    ["product aliases disagree", { ...cable, serviceid: "dstv-yanga" }, [{ field: "product_code" }, { field: "serviceid" }]],
    ["not a cable product", { ...cable, product_code: "mtn-airtime" }, [{ field: "product_code", message: /airtime product/ }]],
  ];
  test.each(cases)("%s", async (_label, body, expected) => {
    await expectRefused("/api/v1/bills/cable", body, expected);
  });
});
