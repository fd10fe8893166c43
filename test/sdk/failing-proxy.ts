export interface VendAttempt {
  idempotencyKey: string | null;
  /** What the proxy answered the client. */
  answered: number;
}

export interface FailingProxy {
  url: string;
  /** Every `POST /api/v1/vend` that passed through, in order. */
  vendAttempts(): VendAttempt[];
  close(): void;
}

/**
 * A proxy in front of `target` that loses the answer to the first attempt of each vend: it forwards the first
 * `POST /api/v1/vend` with a given Idempotency-Key to the server (which accepts and charges it), then answers the
 * client `503 SERVICE_UNAVAILABLE` as a failing load balancer would. Every other request passes through.
 */
export function startFailingProxy(target: string): FailingProxy {
  const attempts: VendAttempt[] = [];
  const seen = new Set<string | null>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.delete("host");
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const answer = await fetch(`${target}${url.pathname}${url.search}`, { method: request.method, headers, body });
      if (request.method !== "POST" || url.pathname !== "/api/v1/vend") return answer;
      const idempotencyKey = request.headers.get("idempotency-key");
      const first = !seen.has(idempotencyKey);
      seen.add(idempotencyKey);
      attempts.push({ idempotencyKey, answered: first ? 503 : answer.status });
      if (!first) return answer;
      await answer.arrayBuffer();
      return Response.json(
        { success: false, code: "SERVICE_UNAVAILABLE", message: "The upstream went away", data: null },
        { status: 503, headers: { "x-request-id": "proxy-503" } },
      );
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, vendAttempts: () => attempts, close: () => server.stop(true) };
}
