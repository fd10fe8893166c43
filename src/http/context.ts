import { randomBase62 } from "../lib/random.ts";

export interface RequestContext {
  id: string;
  startedAt: number;
  operationId?: string;
  accountId?: string;
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
