import { AppError, validationError } from "../../errors.ts";
import { contextOf } from "../context.ts";
import type { OperationSpec } from "../spec.ts";
import { maxBodyDepth, nestsDeeperThan } from "../validation.ts";

export const maxBodyBytes = 64 * 1024;
const drainBytes = 4 * 1024 * 1024;

const tooLarge = (limit: number) => new AppError("PAYLOAD_TOO_LARGE", `Request body exceeds ${limit} bytes`);

/**
 * Reads at most `limit` bytes of the body (`maxBodyBytes`, or the operation's own `x-max-body-bytes`) and
 * stops there: the transport accepts any size (so its own bare 413 never answers), and this is the only
 * place a body is buffered.
 */
async function readCappedText(request: Request, limit: number): Promise<string> {
  const declaredLength = Number(request.headers.get("content-length") ?? "0");
  if (declaredLength > limit) throw tooLarge(limit);
  const reader = request.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    size += chunk.value.byteLength;
    if (size > limit) {
      await discardRest(reader, size);
      throw tooLarge(limit);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads and drops what is left of an oversized body (up to a few MiB, for at most two seconds), so the
 * client has finished sending when the 413 goes out: closing a socket with unread data resets it, and
 * the client would lose the answer. Past that bound the connection is closed and the rest never read.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, readSoFar: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<"time">((resolve) => {
    timer = setTimeout(() => resolve("time"), 2000);
  });
  let size = readSoFar;
  try {
    while (size <= drainBytes) {
      const chunk = await Promise.race([reader.read(), timeUp]);
      if (chunk === "time") break;
      if (chunk.done) return;
      size += chunk.value.byteLength;
    }
  } finally {
    clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
}

/**
 * The request's JSON body, parsed (undefined when the operation takes none or none was sent), and its text; the
 * text is kept on the request's context as read (also when it is then refused) for the request log.
 */
export async function readBody(op: OperationSpec, request: Request): Promise<{ body: unknown; raw: string }> {
  if (!op.bodyPointer) return { body: undefined, raw: "" };
  const raw = await readCappedText(request, op.maxBodyBytes ?? maxBodyBytes);
  if (raw !== "") contextOf(request).requestBody = raw;
  if (raw.trim() === "") {
    if (op.bodyRequired) throw validationError([{ field: "body", message: "is required" }], "A JSON request body is required");
    return { body: undefined, raw };
  }
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (contentType !== "application/json" && !contentType.endsWith("+json")) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON with Content-Type: application/json");
  }
  // Refused before parsing, so nothing that walks the value (validation, the text check) meets it.
  if (nestsDeeperThan(raw, maxBodyDepth))
    throw validationError(
      [{ field: "body", message: `nests arrays and objects more than ${maxBodyDepth} levels deep` }],
      "JSON request body is nested too deeply",
    );
  try {
    return { body: JSON.parse(raw), raw };
  } catch {
    // Includes a RangeError from the parser itself on input nested beyond what it can take.
    throw validationError([{ field: "body", message: "is not valid JSON" }], "Malformed JSON in request body");
  }
}
