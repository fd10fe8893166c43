import type { ValidateFunction } from "ajv/dist/2020.js";
import { eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { tokensEqual } from "../auth/service.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { products, providerCallbacks, transactions } from "../db/schema/index.ts";
import { AppError, validationError } from "../errors.ts";
import { toFieldErrors } from "../http/validation.ts";
import { completeTransaction, type FinalOutcome, isFinal } from "../processing/transitions.ts";
import { presentTransaction, type Transaction } from "../transactions/present.ts";
import { verifyCallbackSignature } from "./signature.ts";

export type CallbackBody = components["schemas"]["ProviderCallback"];

export interface CallbackProvider {
  token: string;
  secret: string;
  /** Turns the provider's own body into the sandbox format; null if it is not a final update. */
  translate?: (body: unknown) => CallbackBody | null;
}

export type CallbackProviders = Map<string, CallbackProvider>;

export function callbackProviders(config: Config, vtuTranslate?: CallbackProvider["translate"]): CallbackProviders {
  const providers: CallbackProviders = new Map([
    ["sandbox", { token: config.sandbox.callbackToken, secret: config.sandbox.callbackSecret }],
  ]);
  if (config.vtu)
    providers.set("vtu", { token: config.vtu.callbackToken, secret: config.vtu.callbackSecret, translate: vtuTranslate });
  return providers;
}

export interface IncomingCallback {
  provider: string;
  rawBody: string;
  authorization: string | null;
  signature: string | null;
  /** Operator replays skip the bearer check (the token is never stored) but re-verify the signature. */
  replayOf?: string;
}

export interface CallbackResult {
  status: number;
  transaction: Transaction | null;
  error: AppError | null;
  storedId: string;
}

const headersWorthKeeping = (incoming: IncomingCallback) => ({
  ...(incoming.signature ? { "x-provider-signature": incoming.signature } : {}),
  bearer: incoming.replayOf ? "not checked (replay)" : incoming.authorization ? "present" : "missing",
});

function outcomeOf(body: CallbackBody): FinalOutcome {
  const metadata: Record<string, string> = {};
  if (body.token !== undefined) metadata.token = body.token;
  if (body.units !== undefined) metadata.units = body.units;
  if (body.receipt_number !== undefined) metadata.receipt_number = body.receipt_number;
  if (body.status === "successful") return { status: "successful", providerReference: body.provider_reference, metadata };
  return {
    status: "failed",
    providerReference: body.provider_reference,
    reason: body.message ?? "Declined by provider",
    metadata,
  };
}

/** Data delivery reported by a callback, in the transaction's service-owned keys (as the worker sets them). */
async function deliveryMetadata(db: Database, body: CallbackBody, productCode: string): Promise<Record<string, string>> {
  if (body.status !== "successful") return {};
  const [product] = await db.select({ requestedMb: products.requestedMb }).from(products).where(eq(products.code, productCode));
  const requested = product?.requestedMb;
  if (requested === null || requested === undefined) return {};
  const delivered = body.delivered_mb ?? requested;
  return { requested_mb: String(requested), delivered_mb: String(delivered), partial: String(delivered < requested) };
}

function authenticate(
  provider: CallbackProvider | undefined,
  incoming: IncomingCallback,
  signatureValid: boolean,
  validate: ValidateFunction,
): CallbackBody {
  if (!provider) throw new AppError("NOT_FOUND", `Unknown provider ${incoming.provider}`);
  if (!incoming.replayOf) {
    const token = /^Bearer\s+(\S+)$/i.exec(incoming.authorization ?? "")?.[1] ?? "";
    if (!tokensEqual(token, provider.token)) throw new AppError("UNAUTHENTICATED", "Provider token is not valid");
  }
  if (!signatureValid) throw new AppError("UNAUTHENTICATED", "X-Provider-Signature does not match the body");
  let parsed: unknown;
  try {
    parsed = JSON.parse(incoming.rawBody);
  } catch {
    throw validationError([{ field: "body", message: "is not valid JSON" }], "Malformed JSON in request body");
  }
  const body = provider.translate ? provider.translate(parsed) : parsed;
  if (!body || !validate(body)) throw validationError(toFieldErrors(validate.errors), "Callback body is not valid");
  return body as CallbackBody;
}

/** Applies a callback to its transaction; the same outcome twice is a no-op, a contradiction is 409. */
async function apply(db: Database, provider: string, body: CallbackBody): Promise<Transaction> {
  const [row] = await db.select().from(transactions).where(eq(transactions.reference, body.reference));
  if (!row || row.provider !== provider)
    throw new AppError("NOT_FOUND", `No ${provider} transaction with reference ${body.reference}`);
  const outcome = outcomeOf(body);
  outcome.metadata = { ...outcome.metadata, ...(await deliveryMetadata(db, body, row.productCode)) };
  const result = isFinal(row.status) ? { row, changed: false } : await completeTransaction(db, row.id, outcome, row);
  if (!isFinal(result.row.status)) {
    throw new AppError(
      "CALLBACK_CONFLICT",
      `Transaction ${row.reference} has not been sent to the provider yet (status ${result.row.status})`,
    );
  }
  if (result.row.status !== body.status) {
    throw new AppError(
      "CALLBACK_CONFLICT",
      `Transaction ${row.reference} is already ${result.row.status}; a ${body.status} callback contradicts it`,
    );
  }
  return presentTransaction(result.row);
}

/** The whole callback path, live or replayed: authenticate, validate, apply, and store the callback with its outcome. */
export async function handleCallback(
  db: Database,
  providers: CallbackProviders,
  validate: ValidateFunction,
  incoming: IncomingCallback,
): Promise<CallbackResult> {
  const provider = providers.get(incoming.provider);
  const signatureValid = provider ? verifyCallbackSignature(provider.secret, incoming.rawBody, incoming.signature) : false;
  let body: CallbackBody | null = null;
  let transaction: Transaction | null = null;
  let error: AppError | null = null;
  try {
    body = authenticate(provider, incoming, signatureValid, validate);
    transaction = await apply(db, incoming.provider, body);
  } catch (caught) {
    if (!(caught instanceof AppError)) throw caught;
    error = caught;
  }
  let reference: string | null = null;
  let eventId: string | null = null;
  try {
    const parsed = JSON.parse(incoming.rawBody) as Record<string, unknown>;
    reference = body?.reference ?? (typeof parsed.reference === "string" ? parsed.reference : null);
    eventId = body?.event_id ?? (typeof parsed.event_id === "string" ? parsed.event_id : null);
  } catch {}
  const [stored] = await db
    .insert(providerCallbacks)
    .values({
      provider: incoming.provider.slice(0, 64),
      reference: reference?.slice(0, 64) ?? null,
      eventId: eventId?.slice(0, 128) ?? null,
      headers: headersWorthKeeping(incoming),
      rawBody: incoming.rawBody,
      signatureValid,
      httpStatus: error?.status ?? 200,
      resultCode: error?.code ?? "OK",
      replayOf: incoming.replayOf ?? null,
    })
    .returning({ id: providerCallbacks.id });
  return { status: error?.status ?? 200, transaction, error, storedId: stored?.id ?? "" };
}
