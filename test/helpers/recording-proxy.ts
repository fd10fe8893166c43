/**
 * An HTTP proxy in front of a test server that records every request it passes on as `METHOD /path`, so a test
 * can say what a client sent: "nothing" is an empty list, not a state that happens to look unchanged.
 */
export interface RecordingProxy {
  /** The proxy's base URL, for the client under test. */
  url: string;
  /** The requests passed on so far, oldest first; a test may empty it (`sent.length = 0`). */
  sent: string[];
  stop(): void;
}

/** Starts the proxy on a free port, passing each request on to `target()` (a base URL, read per request). */
export function startRecordingProxy(target: () => string): RecordingProxy {
  const sent: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      sent.push(`${request.method} ${url.pathname}`);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const upstream = await fetch(`${target()}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
      });
      const headers = new Headers(upstream.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, sent, stop: () => server.stop(true) };
}
