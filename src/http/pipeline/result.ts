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
  | {
      status: number;
      /** A stream (Server-Sent Events) is sent as it is written. */
      raw: string | Blob | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>;
      contentType: string;
      headers?: Record<string, string>;
    }
  /** No body at all (`304 Not Modified`). */
  | { status: number; empty: true; headers?: Record<string, string> };

/** A handler's outcome as the HTTP answer. */
export function toResponse(request: Request, result: Outcome<unknown>): Response {
  if ("empty" in result) {
    return new Response(null, { status: result.status, headers: { "x-request-id": contextOf(request).id, ...result.headers } });
  }
  if ("raw" in result) {
    const context = contextOf(request);
    // A stored idempotent answer is JSON text: kept for the request log like any JSON answer; files are not.
    if (typeof result.raw === "string" && result.contentType.startsWith("application/json")) context.responseBody = result.raw;
    if (result.headers?.["idempotent-replayed"] === "true") context.idempotentReplayed = true;
    return new Response(result.raw, {
      status: result.status,
      headers: { "content-type": result.contentType, "x-request-id": context.id, ...result.headers },
    });
  }
  return jsonResponse(request, result.status, JSON.stringify(successEnvelope(result.data, result.message)), result.headers);
}
