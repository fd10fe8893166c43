import { type ClientRequest, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { classifyAddress, type HostResolver, ipLiteralOf, pinnedLookup, RefusedAddressError } from "./url-guard.ts";

export interface SendOptions {
  timeoutMs: number;
  allowPrivateUrls: boolean;
  resolveHost: HostResolver;
}

/**
 * How one POST ended. `detail` (an error code or address range, never the destination) is for the
 * server log; clients are only told the kind.
 */
export type SendResult =
  | { kind: "response"; statusCode: number }
  | { kind: "refused"; detail: string }
  | { kind: "timeout" }
  | { kind: "unreachable"; detail: string };

function resultOf(error: unknown): SendResult {
  if (error instanceof RefusedAddressError) return { kind: "refused", detail: error.range };
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return { kind: "unreachable", detail: code ?? (error instanceof Error ? error.name : "unknown") };
}

/**
 * POSTs `body` to `url` over a fresh connection (no keep-alive pool: every socket goes through the
 * guard) whose address is resolved and checked once, by the socket's own lookup. An IP literal skips
 * DNS and is checked here. Redirects are not followed; the timeout covers DNS, connect and answer.
 * Never throws.
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<SendResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ kind: "unreachable", detail: "invalid url" });
  }
  const literal = ipLiteralOf(target.hostname);
  const literalRange = literal && !options.allowPrivateUrls ? classifyAddress(literal) : null;
  if (literalRange) return Promise.resolve({ kind: "refused", detail: literalRange });
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let req: ClientRequest | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (result: SendResult) => {
      clearTimeout(timer);
      req?.destroy();
      resolve(result);
    };
    try {
      req = send(
        {
          protocol: target.protocol,
          hostname: literal ?? target.hostname,
          port: target.port || undefined,
          path: `${target.pathname}${target.search}`,
          auth: target.username ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}` : undefined,
          method: "POST",
          agent: false,
          lookup: pinnedLookup(options.resolveHost, options.allowPrivateUrls),
          headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        },
        // Only the status matters; the body is dropped with the connection.
        (res) => finish({ kind: "response", statusCode: res.statusCode ?? 0 }),
      );
      timer = setTimeout(() => finish({ kind: "timeout" }), options.timeoutMs);
      req.on("error", (error) => finish(resultOf(error)));
      req.end(body);
    } catch (error) {
      finish(resultOf(error));
    }
  });
}
