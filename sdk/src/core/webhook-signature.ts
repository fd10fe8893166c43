import type {
  CatalogueUpdated,
  EventType,
  Transaction,
  VendBatch,
  WalletBalanceLow,
  WebhookEndpointDisabled,
  WebhookEvent,
  WebhookPingEvent,
} from "../generated/client/types.gen.js";
import { WebhookVerificationError } from "./errors.js";

/** A webhook's payload, `data` typed by `type` (as `EventType` describes it). */
export type VendWebhookEvent = Omit<WebhookEvent, "type" | "data"> &
  (
    | { type: "transaction.successful" | "transaction.failed"; data: Transaction }
    | { type: "batch.completed"; data: VendBatch }
    | { type: "wallet.balance_low"; data: WalletBalanceLow }
    | { type: "catalogue.updated"; data: CatalogueUpdated }
    | { type: "webhook_endpoint.disabled"; data: WebhookEndpointDisabled }
  );

/** Fails to compile when the contract gains an event type this union does not type. */
const everyEventTyped: [Exclude<EventType, VendWebhookEvent["type"]>] extends [never] ? true : false = true;
void everyEventTyped;

/** What `constructEvent` returns: an event, or the test event `POST …/ping` sends. */
export type WebhookPayload = VendWebhookEvent | WebhookPingEvent;

/** Headers as `fetch` (`Headers`) or `node:http` (`req.headers`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface ConstructEventOptions {
  /** How far `webhook-timestamp` may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** The time to check against (default now). */
  now?: Date;
}

const encoder = new TextEncoder();

/**
 * Verifies a webhook per Standard Webhooks and returns its payload: `webhook-signature` must hold a `v1,` HMAC-SHA256
 * of `<webhook-id>.<webhook-timestamp>.<raw body>` under the endpoint's `whsec_…` secret (any one of the
 * space-separated signatures: during a secret rotation both are sent), and `webhook-timestamp` must be within the
 * tolerance. `rawBody` is the body exactly as received (parsing and re-serialising JSON breaks the signature).
 * Several secrets may be given (a receiver that holds both during a rotation). Throws `WebhookVerificationError`.
 */
export async function constructEvent(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<WebhookPayload> {
  const id = headerOf(headers, "webhook-id");
  const timestamp = headerOf(headers, "webhook-timestamp");
  const signatures = headerOf(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw failure("Missing webhook-id, webhook-timestamp or webhook-signature header");
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) throw failure("Invalid webhook-timestamp header");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (seconds < now - tolerance) throw failure("Webhook timestamp is too old");
  if (seconds > now + tolerance) throw failure("Webhook timestamp is too new");

  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  const candidates = signatures
    .split(" ")
    .map((entry) => entry.split(","))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0] === "v1" && parts[1] !== "")
    .map(([, value]) => decodeBase64(value))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== null);
  for (const key of await Promise.all((typeof secret === "string" ? [secret] : secret).map(importSecret)))
    for (const candidate of candidates)
      if (await globalThis.crypto.subtle.verify("HMAC", key, candidate, signed)) return parse(body);
  throw failure("No matching webhook signature");
}

function parse(body: Uint8Array): WebhookPayload {
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookPayload;
  } catch {
    throw failure("Webhook body is not JSON");
  }
}

function importSecret(secret: string): Promise<CryptoKey> {
  const key = decodeBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!key || key.length === 0) throw failure("The webhook secret is not a whsec_ base64 secret");
  return globalThis.crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>))
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(" ") : value;
  return undefined;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return null;
  }
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

function failure(message: string): WebhookVerificationError {
  return new WebhookVerificationError({
    code: "WEBHOOK_VERIFICATION_FAILED",
    status: null,
    message,
    requestId: null,
    idempotencyKey: null,
    raw: null,
    headers: null,
  });
}
