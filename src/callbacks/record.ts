import { providerCallbacks } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { AppError } from "../errors.ts";
import type { CallbackProviders } from "../providers/callback-providers.ts";

/** Bytes of the raw body kept for a refused callback. */
const refusedBodyBytes = 4096;

/** How many refused callbacks this process stores (see CallbackProviders). */
export type RecordLimits = Pick<CallbackProviders, "refusedPerMinute" | "refusedStored">;

export interface ReceivedCallback {
  provider: string;
  rawBody: string;
  signature: string | null;
  replayOf?: string;
}

export interface CallbackOutcome {
  /** The signature is the provider's over this body (a stale one included). */
  signatureValid: boolean;
  /** Signature and body were accepted: the callback was authentic and well-formed. */
  accepted: boolean;
  error: AppError | null;
  reference: string | null;
  eventId: string | null;
}

/** The first `limit` bytes of `raw`, cut at a character boundary. */
function headOf(raw: string, limit: number): { text: string; receivedBytes: number } {
  const bytes = Buffer.from(raw);
  if (bytes.length <= limit) return { text: raw, receivedBytes: bytes.length };
  let end = limit;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString("utf8"), receivedBytes: bytes.length };
}

/** Text PostgreSQL can store (no NUL, no unpaired surrogate), cut to `length` characters. */
const storable = (text: string | null, length: number) =>
  text?.slice(0, length).replaceAll("\u0000", "\uFFFD").toWellFormed() ?? null;

/**
 * Stores a callback with its outcome and answers its id. Accepted callbacks (and every operator replay)
 * are stored whole, so they can be listed and replayed. A refused one (bad signature, stale, bad body)
 * comes from someone holding only the bearer token: it is stored bounded, its body cut to
 * `refusedBodyBytes` and marked, and at most `refusedPerMinute` per provider; past that, null.
 */
export async function recordCallback(
  db: Executor,
  limits: RecordLimits,
  incoming: ReceivedCallback,
  outcome: CallbackOutcome,
): Promise<string | null> {
  const whole = outcome.accepted || incoming.replayOf !== undefined;
  if (!whole && limits.refusedStored.add(incoming.provider) > limits.refusedPerMinute) return null;
  const body = whole ? { text: incoming.rawBody, receivedBytes: 0 } : headOf(incoming.rawBody, refusedBodyBytes);
  const truncated = body.text.length < incoming.rawBody.length;
  const headers: Record<string, string> = {
    ...(incoming.signature ? { "x-provider-signature": incoming.signature } : {}),
    bearer: incoming.replayOf ? "not checked (replay)" : "valid",
    ...(truncated ? { "body-truncated": `kept ${Buffer.byteLength(body.text)} of ${body.receivedBytes} bytes` } : {}),
  };
  const [stored] = await db
    .insert(providerCallbacks)
    .values({
      // Time-ordered (UUIDv7, monotonic in this process): callbacks stored within one millisecond of
      // `received_at` still list newest first, in the order they arrived.
      id: Bun.randomUUIDv7(),
      provider: incoming.provider.slice(0, 64),
      reference: storable(outcome.reference, 64),
      eventId: storable(outcome.eventId, 128),
      headers,
      rawBody: body.text,
      signatureValid: outcome.signatureValid,
      httpStatus: outcome.error?.status ?? 200,
      resultCode: outcome.error?.code ?? "OK",
      replayOf: incoming.replayOf ?? null,
    })
    .returning({ id: providerCallbacks.id });
  return stored?.id ?? null;
}
