import { afterAll, beforeAll, expect, test } from "bun:test";
import { recordCallback } from "../../src/callbacks/record.ts";
import { FixedWindowCounter } from "../../src/lib/fixed-window.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Stored callbacks are listed newest first. `received_at` has millisecond precision, so callbacks stored
 * within one millisecond are ordered by their id: ids must follow arrival, or such a run comes back
 * shuffled (seen in CI: two refused callbacks sent back to back were listed the other way round).
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

test("callbacks stored within the same millisecond are listed newest first, in arrival order", async () => {
  const reference = "txn_order_probe";
  const limits = { refusedPerMinute: 1000, refusedStored: new FixedWindowCounter() };
  const stored: string[] = [];
  // Stored back to back without HTTP in between: many share a millisecond.
  for (let i = 0; i < 40; i++) {
    const eventId = `order-${String(i).padStart(2, "0")}`;
    const rawBody = JSON.stringify({ event_id: eventId, reference, status: "successful" });
    const id = await recordCallback(
      server.database.handle.db,
      limits,
      { provider: "sandbox", rawBody, signature: "t=1,sha256=00" },
      { signatureValid: false, accepted: false, error: null, reference, eventId },
    );
    expect(id).not.toBeNull();
    stored.push(eventId);
  }
  const listed = await server.admin.get("/admin/v1/callbacks", { query: { reference, limit: 100 } });
  const items = listed.json.data.items as { event_id: string }[];
  expect(items.map((item) => item.event_id)).toEqual(stored.toReversed());
});
