import { successEnvelope } from "../../errors.ts";
import { contextOf } from "../context.ts";
import { jsonResponse } from "../respond.ts";

/**
 * What an admin handler tells the audit trail beyond its answer: the target when the path names none (a
 * created resource), the state before the change, the note.
 */
export interface AuditDetail {
  target?: { type: string; id: string };
  before?: unknown;
  note?: string | null;
}

/** What a handler answers, whatever its operation: `Data` in the success envelope, a raw body, or none. */
export type Outcome<Data> =
  | { status: number; data: Data; message?: string; headers?: Record<string, string>; audit?: AuditDetail }
  | { status: number; raw: string | Blob | Uint8Array<ArrayBuffer>; contentType: string; headers?: Record<string, string> }
  /** No body at all (`304 Not Modified`). */
  | { status: number; empty: true; headers?: Record<string, string> };

/** A handler's outcome as the HTTP answer. */
export function toResponse(request: Request, result: Outcome<unknown>): Response {
  if ("empty" in result) {
    return new Response(null, { status: result.status, headers: { "x-request-id": contextOf(request).id, ...result.headers } });
  }
  if ("raw" in result) {
    return new Response(result.raw, {
      status: result.status,
      headers: { "content-type": result.contentType, "x-request-id": contextOf(request).id, ...result.headers },
    });
  }
  return jsonResponse(request, result.status, JSON.stringify(successEnvelope(result.data, result.message)), result.headers);
}
