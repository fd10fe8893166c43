import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient, HttpResult } from "../helpers/http.ts";
import { insertTransactions } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * A cursor is `<base64url JSON [created_at millis, id]>.<signature>`. The tampering tests elsewhere change one
 * character, which breaks the JSON or the signature. These keep the signature and put another well-formed
 * position under it, as a client reading its own cursors could: the signature must cover the position, so
 * every such cursor is refused and no rows are shown.
 */

type Position = [number, string];
type Query = Record<string, string | number | undefined>;

let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await fundedAccount(server, 5_000_000, "Cursor Forger");
  await insertTransactions(server.database.handle.db, {
    accountId: account.id,
    mode: "test",
    count: 7,
    newest: new Date(Date.now() - 3_600_000),
    generate: (index) => ({ clientReference: `forge-${index}` }),
  });
  for (let n = 0; n < 5; n++) {
    const orders = [{ service: "airtime", product_code: "mtn-airtime", phone_number: `0803100000${n}`, amount_kobo: 10_000 }];
    const res = await account.client.post("/api/v1/vend/batches", { orders }, idem());
    if (res.status !== 202) throw new Error(`batch failed: ${res.status} ${res.text}`);
  }
  for (let n = 0; n < 5; n++) await server.createAccount(`Forged cursor ${n}`);
  for (let n = 0; n < 4; n++) {
    const res = await account.client.post("/api/v1/wallet/fund", { amount_kobo: 1_000 + n }, idem());
    if (res.status !== 200) throw new Error(`fund failed: ${res.text}`);
  }
}, 60_000);
afterAll(() => server.close());

const payloadOf = (cursor: string) => cursor.split(".")[0] ?? "";
const signatureOf = (cursor: string) => cursor.split(".")[1] ?? "";
const positionOf = (cursor: string): Position => JSON.parse(Buffer.from(payloadOf(cursor), "base64url").toString("utf8"));
/** `position` encoded as the server encodes it, under `cursor`'s signature. */
const withPosition = (cursor: string, position: Position) =>
  `${Buffer.from(JSON.stringify(position)).toString("base64url")}.${signatureOf(cursor)}`;

const idsOf = (res: HttpResult): string[] =>
  res.json.data.items.map((item: { id?: string | number; reference?: string }) => String(item.reference ?? item.id));

function expectRefused(res: HttpResult) {
  expect(res.status).toBe(400);
  expect(res.json).toMatchObject({ success: false, code: "VALIDATION_FAILED", message: "Invalid cursor" });
  expect(res.json.data.errors[0].field).toBe("cursor");
  // The envelope carries the errors alone: no page, no rows.
  expect(Object.keys(res.json.data)).toEqual(["errors"]);
}

interface Listing {
  name: string;
  client: () => HttpClient;
  path: string;
  query: Query;
}

const listings: Listing[] = [
  { name: "GET /api/v1/transactions", client: () => account.client, path: "/api/v1/transactions", query: {} },
  {
    name: "GET /api/v1/transactions (search)",
    client: () => account.client,
    path: "/api/v1/transactions",
    query: { search: "forge-" },
  },
  { name: "GET /api/v1/vend/batches", client: () => account.client, path: "/api/v1/vend/batches", query: {} },
  { name: "GET /admin/v1/accounts", client: () => server.admin, path: "/admin/v1/accounts", query: { search: "forged" } },
  { name: "GET /api/v1/wallet/ledger", client: () => account.client, path: "/api/v1/wallet/ledger", query: { kind: "fund" } },
];

describe("a well-formed position under another position's signature is refused", () => {
  for (const listing of listings) {
    test(`${listing.name}: 400 on field cursor, no rows`, async () => {
      const get = (query: Query) => listing.client().get(listing.path, { query: { ...listing.query, limit: 2, ...query } });
      const page1 = await get({});
      expect(page1.status).toBe(200);
      const first: string = page1.json.data.page.next_cursor;
      expect(first).toBeString();
      const page2 = await get({ cursor: first });
      expect(page2.status).toBe(200);
      const second: string = page2.json.data.page.next_cursor;
      expect(second).toBeString();
      const page3 = await get({ cursor: second });
      expect(page3.status).toBe(200);

      // Control: the genuine cursors work, and the two positions name different rows.
      expect(idsOf(page2)).toHaveLength(2);
      expect(idsOf(page3).length).toBeGreaterThan(0);
      expect(idsOf(page3).some((id) => idsOf(page2).includes(id))).toBe(false);
      const [firstAt, firstId] = positionOf(first);
      const [secondAt, secondId] = positionOf(second);
      expect(typeof firstAt).toBe("number");
      expect(secondId).not.toBe(firstId);

      const forgeries: [string, string, Position][] = [
        ["page 3's position under page 2's signature (skips rows)", first, [secondAt, secondId]],
        ["page 2's position under page 3's signature (shows rows again)", second, [firstAt, firstId]],
        ["the start again (a time after every row)", first, [Date.now() + 86_400_000, firstId]],
        ["an earlier time, the same id", first, [firstAt - 60_000, firstId]],
        ["the same time, another row's id", first, [firstAt, secondId]],
      ];
      for (const [what, signed, position] of forgeries) {
        expect(position).not.toEqual(positionOf(signed));
        const res = await get({ cursor: withPosition(signed, position) });
        if (res.status !== 400) throw new Error(`${what}: answered ${res.status} ${res.text.slice(0, 200)}`);
        expectRefused(res);
      }

      // The refusals changed nothing: the genuine cursor still answers the same page.
      const again = await get({ cursor: first });
      expect(again.status).toBe(200);
      expect(idsOf(again)).toEqual(idsOf(page2));
    });
  }
});
