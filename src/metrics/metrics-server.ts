import { ConfigError } from "../config.ts";
import { AppError, errorEnvelope } from "../errors.ts";
import { routableRequest } from "../lib/routable-request.ts";
import type { Logger } from "../logger.ts";
import { checkScrapeAccess, type ScrapeAccess } from "./access.ts";
import type { Metrics } from "./metrics.ts";

export interface MetricsServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function errorAnswer(error: AppError): Response {
  return new Response(JSON.stringify(errorEnvelope(error)), {
    status: error.status,
    headers: { "content-type": "application/json; charset=utf-8", ...error.headers },
  });
}

/**
 * Why the port cannot be had, as the setting to change: two workers on one host each need their own
 * METRICS_PORT (Prometheus scrapes fixed ports, so the default stays one fixed port rather than a free one).
 */
function listenError(error: unknown, port: number, hostname: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === "EADDRINUSE")
    return new ConfigError(
      "METRICS_PORT",
      `${port} is in use on this host (another vend work?): give each worker process its own METRICS_PORT`,
    );
  if (code === "EACCES")
    return new ConfigError("METRICS_PORT", `${port} needs privileges this process lacks: use one above 1023`);
  if (code === "EADDRNOTAVAIL") return new ConfigError("HOST", `${hostname} is not an address of this machine`);
  return error;
}

/**
 * `GET /metrics` alone, for a process without the API (`vend work`), under the same rule as the
 * API's route: the token when one is set. Anything else is 404. A port it cannot listen on is a
 * ConfigError naming the setting (one line, no stack).
 */
export function startMetricsServer(
  metrics: Metrics,
  options: { port: number; hostname: string; token: string | undefined; logger: Logger },
): MetricsServer {
  const access: ScrapeAccess = { enabled: true, token: options.token };
  const handle = async (request: Request) => {
    const { pathname } = new URL(routableRequest(request).url);
    if (request.method !== "GET" || pathname !== "/metrics") {
      return errorAnswer(new AppError("NOT_FOUND", `No route for ${request.method} ${pathname}`));
    }
    try {
      checkScrapeAccess(access, request.headers.get("authorization"));
      return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } });
    } catch (error) {
      if (error instanceof AppError) return errorAnswer(error);
      options.logger.error({ err: error }, "metrics scrape failed");
      return errorAnswer(new AppError("INTERNAL_ERROR", "Metrics could not be collected"));
    }
  };
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ port: options.port, hostname: options.hostname, fetch: handle });
  } catch (error) {
    throw listenError(error, options.port, options.hostname);
  }
  const port = server.port ?? options.port;
  const host = options.hostname === "0.0.0.0" ? "127.0.0.1" : options.hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    stop: async () => {
      await server.stop(true);
    },
  };
}
