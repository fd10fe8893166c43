import { isRecord } from "../../src/providers/readings.ts";
import { VtuBook, type VtuPayBody, vtuAnswer, vtuTestConfig } from "./vtu-mock.ts";

/**
 * A VTpass-style provider as a real HTTP server, for drills where the service runs as separate processes
 * (msw cannot reach into them). Like a real provider it books an order the moment it receives it, so a
 * re-query during a slow pay answers "pending", and refuses a request id it already holds (code 014).
 * `delayMs` decides how long each pay takes before the provider delivers and answers.
 */
export function startFakeVtuServer(options: { delayMs: (order: VtuPayBody) => number }) {
  const book = new VtuBook();
  /** Every pay request as received, in order: the drill's "at most once at the provider" evidence. */
  const pays: { requestId: string; accepted: boolean }[] = [];
  const authorised = (request: Request) =>
    request.headers.get("api-key") === vtuTestConfig.apiKey && request.headers.get("secret-key") === vtuTestConfig.secretKey;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const body: unknown = await request.json().catch(() => null);
      if (!authorised(request))
        return Response.json({ code: "087", response_description: "INVALID CREDENTIALS" }, { status: 401 });
      if (path === "/api/pay" && isRecord(body) && typeof body.request_id === "string") {
        const order = body as unknown as VtuPayBody;
        const known = book.transactions.has(order.request_id);
        pays.push({ requestId: order.request_id, accepted: !known });
        if (known) return Response.json({ code: "014", response_description: "REQUEST ID ALREADY EXIST" });
        book.record(order, "pending");
        await Bun.sleep(options.delayMs(order));
        return Response.json(vtuAnswer(book.settle(order.request_id, "delivered")));
      }
      if (path === "/api/requery" && isRecord(body) && typeof body.request_id === "string") {
        return Response.json(book.answer(body.request_id) ?? { code: "015", response_description: "INVALID REQUEST ID" });
      }
      return Response.json({ code: "011", response_description: "INVALID ARGUMENTS" }, { status: 400 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    book,
    pays,
    stop: () => server.stop(true),
  };
}
