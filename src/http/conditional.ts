import { createHash } from "node:crypto";
import { successEnvelope } from "../errors.ts";
import type { OperationId, OperationResult, SuccessDataOf } from "./operations.ts";

/** Clients may keep a catalogue answer but revalidate it (If-None-Match) before each use. */
export const revalidateCacheControl = "private, no-cache";

/** A strong entity tag of exactly these bytes. */
export function entityTagOf(body: string): string {
  return `"${createHash("sha256").update(body).digest("base64url")}"`;
}

/**
 * True when an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2, GET: `*`, or any listed tag
 * equal to it by weak comparison, `W/` ignored on both sides). A header naming no tag matches nothing.
 */
export function noneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  for (const [, tag] of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (tag === opaque) return true;
  return false;
}

/**
 * A read answered with an ETag of its exact body and `private, no-cache`, or `304` with no body (same
 * ETag and Cache-Control) when the request's If-None-Match already names that body.
 */
export function conditionalAnswer<Id extends OperationId>(
  input: { operationId: Id; request: Request },
  data: SuccessDataOf<Id>,
): OperationResult<Id> {
  const body = JSON.stringify(successEnvelope(data));
  const etag = entityTagOf(body);
  const headers = { etag, "cache-control": revalidateCacheControl };
  if (noneMatchHits(input.request.headers.get("if-none-match"), etag)) return { status: 304, empty: true, headers };
  return { status: 200, raw: body, contentType: "application/json; charset=utf-8", headers };
}
