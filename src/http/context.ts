import { isIP } from "node:net";
import { randomBase62 } from "../lib/random.ts";
import type { Mode } from "../lib/scope.ts";

export interface RequestContext {
  id: string;
  startedAt: number;
  operationId?: string;
  accountId?: string;
  /** The key's mode, id and display prefix (never the key) on ApiKey operations, for the request log. */
  mode?: Mode;
  keyId?: string;
  keyPrefix?: string;
  /** The operator's name on admin operations. */
  operator?: string;
  /** The client's address, set by the server for each request (absent for in-process `app.handle`). */
  ip?: string;
  /** The connection's peer is a loopback address and the request names no forwarded client. */
  local?: boolean;
  /** The W3C traceparent of the request's span, when tracing is on (stored with an accepted vend). */
  traceparent?: string;
  /** The body as read (src/http/pipeline/read-body.ts), kept for the request log. */
  requestBody?: string;
  /** The JSON body as answered (src/http/respond.ts, pipeline/result.ts), kept for the request log. */
  responseBody?: string;
  /** The error envelope's code when the answer was built from an error. */
  errorCode?: string;
  /** The answer was the stored answer of an earlier request with the same Idempotency-Key. */
  idempotentReplayed?: boolean;
}

const contexts = new WeakMap<Request, RequestContext>();
const acceptableId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Per-request state: the request id (echoed from X-Request-Id when sane) and timing. */
export function contextOf(request: Request): RequestContext {
  let context = contexts.get(request);
  if (!context) {
    const given = request.headers.get("x-request-id");
    context = {
      id: given && acceptableId.test(given) ? given : `req_${randomBase62(20)}`,
      startedAt: performance.now(),
    };
    contexts.set(request, context);
  }
  return context;
}

/**
 * Records the client's address: the connection's peer. Behind a proxy the peer is the proxy, so with
 * `trustProxy` the last X-Forwarded-For entry (the address that proxy saw) is taken instead; without
 * it the header is ignored, because anyone can send one.
 */
export function recordClientAddress(request: Request, peer: string | undefined, trustProxy: boolean): Request {
  const forwarded = trustProxy ? request.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim() : undefined;
  const context = contextOf(request);
  context.ip = forwarded && isIP(forwarded) ? forwarded : peer;
  context.local = isLoopback(peer) && !request.headers.has("x-forwarded-for") && !request.headers.has("forwarded");
  return request;
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || /^(::ffff:)?127\./.test(address);
}
