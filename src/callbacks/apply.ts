import { and, eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Database } from "../db/client.ts";
import { products, providerAttempts, transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, type FieldError, validationError } from "../errors.ts";
import { secretsEqual } from "../lib/secrets.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { completeTransaction } from "../orders/completion.ts";
import { counted } from "../orders/counted.ts";
import { nudgeRequery } from "../orders/statements/nudge-requery.ts";
import { recordLateAnswer } from "../orders/statements/record-late-answer.ts";
import { type FinalOutcome, isFinal } from "../orders/states.ts";
import { presentTransaction, type Transaction, type TransactionRow } from "../orders/view.ts";
import { raiseAnomaly } from "../providers/anomalies.ts";
import type { CallbackProviders } from "../providers/callback-providers.ts";
import type { ProviderCallbacks } from "../providers/types.ts";
import { recordCallback } from "./record.ts";
import { checkCallbackSignature } from "./signature.ts";

export type CallbackBody = components["schemas"]["ProviderCallback"];

/** How one provider's callbacks are authenticated and read (its plugin says so). */
export type CallbackProvider = ProviderCallbacks;

export interface IncomingCallback {
  provider: string;
  rawBody: string;
  authorization: string | null;
  signature: string | null;
  /**
   * Operator replays skip the bearer check (the token is never stored) and the replay window (a
   * replay is the operator's deliberate act) but re-verify the signature.
   */
  replayOf?: string;
}

export interface CallbackResult {
  status: number;
  transaction: Transaction | null;
  error: AppError | null;
  /** Null when a refused callback was over the storage cap. */
  storedId: string | null;
}

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
    // A callback reports the fate of an order the provider had taken.
    failureCode: "not_delivered",
    metadata,
  };
}

/** Data delivery reported by a callback, in the transaction's service-owned keys (as the worker sets them). */
async function deliveryMetadata(db: Executor, body: CallbackBody, productCode: string): Promise<Record<string, string>> {
  if (body.status !== "successful") return {};
  const [product] = await db.select({ requestedMb: products.requestedMb }).from(products).where(eq(products.code, productCode));
  const requested = product?.requestedMb;
  if (requested === null || requested === undefined) return {};
  const delivered = body.delivered_mb ?? requested;
  return { requested_mb: String(requested), delivered_mb: String(delivered), partial: String(delivered < requested) };
}

/**
 * Checks a body against the common callback schema (`ProviderCallback` of openapi.yaml) and for text the
 * database cannot store: the problems, none when it is valid.
 */
export type CallbackCheck = (body: unknown) => FieldError[];

/** The body in the common callback format, or a 400: authentication has already passed. */
function parseCallbackBody(provider: CallbackProvider, rawBody: string, check: CallbackCheck): CallbackBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw validationError([{ field: "body", message: "is not valid JSON" }], "Malformed JSON in request body");
  }
  const body = provider.translate ? provider.translate(parsed) : parsed;
  const problems = body ? check(body) : [];
  if (!body || problems.length > 0) throw validationError(problems, "Callback body is not valid");
  return body as CallbackBody;
}

/** The reference and event id a body names, as far as it can be read (for the stored record). */
function namesIn(rawBody: string, body: CallbackBody | null): { reference: string | null; eventId: string | null } {
  if (body) return { reference: body.reference, eventId: body.event_id };
  try {
    const parsed = JSON.parse(rawBody) as Record<string, unknown>;
    return {
      reference: typeof parsed.reference === "string" ? parsed.reference : null,
      eventId: typeof parsed.event_id === "string" ? parsed.event_id : null,
    };
  } catch {
    return { reference: null, eventId: null };
  }
}

/**
 * The transaction a provider's callback is about: by the request id it was sent to that provider under
 * (each provider has its own for one order), else, for an order not yet sent anywhere, by its reference.
 */
async function callbackTarget(db: Executor, provider: string, requestId: string): Promise<TransactionRow | undefined> {
  const [sent] = await db
    .select({ row: transactions })
    .from(providerAttempts)
    .innerJoin(transactions, eq(transactions.id, providerAttempts.transactionId))
    .where(and(eq(providerAttempts.provider, provider), eq(providerAttempts.requestId, requestId)));
  if (sent) return sent.row;
  const [row] = await db.select().from(transactions).where(eq(transactions.reference, requestId));
  return row?.provider === provider ? row : undefined;
}

/**
 * A callback from a provider the order has moved away from, because its answer said it had not
 * delivered. A failure only confirms that. A delivery is a double delivery (or a delivery we released
 * the money for): it is recorded on its attempt and raised to operators, never dropped. An order still
 * open elsewhere completes as successful on it, so the money is captured once, for this delivery.
 */
async function applySuperseded(
  deps: CallbackDeps,
  provider: string,
  body: CallbackBody,
  row: TransactionRow,
): Promise<Transaction> {
  const status = body.status === "successful" ? "successful" : "failed";
  await recordLateAnswer(deps.db, row.id, provider, {
    status,
    providerReference: body.provider_reference,
    message: body.message,
  });
  if (status === "failed") return presentTransaction(row);
  let current = row;
  if (!isFinal(row.status)) {
    const outcome = outcomeOf(body);
    const result = await completeTransaction(deps.db, row.id, { ...outcome, attempt: { status, provider } }, row);
    current = counted(deps.metrics, result).row;
  }
  const where = `${provider} reported ${row.reference} (its request ${body.reference}) delivered after the order had moved to ${row.provider}`;
  const consequence =
    row.status === "successful"
      ? `${row.provider} delivered it too: the customer may have received it twice; the money was captured once`
      : row.status === "failed"
        ? `it had failed there and the hold was released: the value was delivered without being charged`
        : `it was still open there and is now successful on this delivery (captured once); ${row.provider} may deliver it as well`;
  await raiseAnomaly(deps.db, deps.logger, {
    kind: "double_delivery",
    provider,
    transactionId: row.id,
    reference: row.reference,
    message: `${where}; ${consequence}`,
  });
  return presentTransaction(current);
}

/** Applies a callback to its transaction; the same outcome twice is a no-op, a contradiction is 409. */
async function apply(deps: CallbackDeps, provider: string, body: CallbackBody): Promise<Transaction> {
  const { db } = deps;
  const row = await callbackTarget(db, provider, body.reference);
  if (!row) throw new AppError("NOT_FOUND", `No ${provider} transaction with reference ${body.reference}`);
  if (row.provider !== provider) return applySuperseded(deps, provider, body, row);
  const outcome = outcomeOf(body);
  outcome.metadata = { ...outcome.metadata, ...(await deliveryMetadata(db, body, row.productCode)) };
  const result = isFinal(row.status)
    ? { row, changed: false }
    : counted(deps.metrics, await completeTransaction(db, row.id, outcome, row));
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

/** What applying a callback needs: the database, the log a double delivery is raised on, where completions are counted. */
export interface CallbackDeps {
  db: Executor;
  logger: Logger;
  metrics?: Metrics;
}

/** The provider's bearer token, compared in constant time. */
function tokenMatches(provider: CallbackProvider, authorization: string | null): boolean {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? "";
  return secretsEqual(token, provider.token);
}

/**
 * Whether a callback carries its provider's token and a good signature inside the replay window: memory
 * and hashing only, no database, so it can run before the failure budget is consulted.
 */
export function callbackAuthentic(providers: CallbackProviders, incoming: IncomingCallback, now = Date.now()): boolean {
  const provider = providers.byName.get(incoming.provider);
  if (!provider || !tokenMatches(provider, incoming.authorization)) return false;
  const signature = checkCallbackSignature(
    provider.scheme,
    provider.secret,
    incoming.rawBody,
    incoming.signature,
    providers.replayWindowSeconds,
    now,
  );
  return signature.problem === null;
}

/**
 * The whole callback path, live or replayed: authenticate, validate, apply, and store the callback with
 * its outcome. An unknown provider or a wrong bearer token is refused without storing anything (anyone
 * can send those); from there on every callback is stored (see recordCallback for the bounds).
 */
export async function handleCallback(
  deps: CallbackDeps,
  providers: CallbackProviders,
  check: CallbackCheck,
  incoming: IncomingCallback,
  now = Date.now(),
): Promise<CallbackResult> {
  const provider = providers.byName.get(incoming.provider);
  if (!provider) throw new AppError("NOT_FOUND", `Unknown provider ${incoming.provider}`);
  if (!incoming.replayOf) {
    if (!tokenMatches(provider, incoming.authorization)) throw new AppError("UNAUTHENTICATED", "Provider token is not valid");
  }
  const windowSeconds = incoming.replayOf ? null : providers.replayWindowSeconds;
  const signature = checkCallbackSignature(
    provider.scheme,
    provider.secret,
    incoming.rawBody,
    incoming.signature,
    windowSeconds,
    now,
  );
  let body: CallbackBody | null = null;
  let transaction: Transaction | null = null;
  let error: AppError | null = null;
  try {
    if (signature.problem) throw new AppError("UNAUTHENTICATED", signature.problem);
    body = parseCallbackBody(provider, incoming.rawBody, check);
    transaction = await apply(deps, incoming.provider, body);
  } catch (caught) {
    if (!(caught instanceof AppError)) throw caught;
    error = caught;
  }
  const storedId = await recordCallback(deps.db, providers, incoming, {
    signatureValid: signature.matches,
    accepted: body !== null,
    error,
    ...namesIn(incoming.rawBody, body),
  });
  return { status: error?.status ?? 200, transaction, error, storedId };
}

/**
 * An unsigned notification from a provider that sends them: never believed, it only brings forward the
 * re-query of the order it names, when that order is pending with this provider. True when one was.
 * 404 for a provider that sends none.
 */
export async function scheduleHintedRequery(
  db: Database,
  providers: CallbackProviders,
  provider: string,
  query: Record<string, string>,
): Promise<boolean> {
  const read = providers.hints.get(provider);
  if (!read) throw new AppError("NOT_FOUND", `Provider ${provider} sends no unsigned notifications`);
  const hint = read(query);
  if (!hint) return false;
  return (await nudgeRequery(db, provider, hint)).length > 0;
}
