import type { FailureCode, ServiceCode } from "../../generated/constants.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { callProvider } from "../providers/call.ts";
import { providerCostKobo } from "../providers/commission.ts";
import type { Providers } from "../providers/registry.ts";
import { type ProviderNotFound, type ProviderOrder, type ProviderOutcome, ProviderUnavailableError } from "../providers/types.ts";
import type { Tracing } from "../tracing/tracing.ts";
import { attemptedProviders, requestIdFor } from "./attempts.ts";
import type { CompletionRequest } from "./completion.ts";
import { completeTransaction } from "./completion.ts";
import { counted } from "./counted.ts";
import { LeaseLostError, type LeaseWatch, unwatchedLease } from "./leases.ts";
import { findProduct, type ProductCache } from "./product-cache.ts";
import type { ClaimedTransaction } from "./statements/claim-due.ts";
import { countProviderSend } from "./statements/count-send.ts";
import { deferUnsent } from "./statements/defer-unsent.ts";
import { markPending } from "./statements/mark-pending.ts";
import { switchProvider } from "./statements/switch-provider.ts";
import type { AttemptAnswer, FinalOutcome, TransitionResult } from "./states.ts";
import type { TransactionRow } from "./view.ts";

export interface ProcessingDeps {
  db: Database;
  caches: { products: ProductCache };
  providers: Providers;
  config: Config;
  logger: Logger;
  /** Spans for each job and its provider calls; none when absent. */
  tracing?: Tracing;
  /** Where transitions and provider calls are counted; absent where nothing is exposed (tool-built deps). */
  metrics?: Metrics;
}

/**
 * The provider's view of a transaction (the product comes from the process's catalogue cache), as sent
 * to `provider` under `requestId`: by default the provider it is with, under its request id there.
 */
export async function toProviderOrder(
  deps: Pick<ProcessingDeps, "db" | "caches" | "providers">,
  row: TransactionRow,
  provider = row.provider,
  requestId = row.providerRequestId ?? row.reference,
): Promise<ProviderOrder> {
  const product = await deps.caches.products.getOrLoad(row.productCode, () => findProduct(deps.db, row.productCode));
  const meterType = row.metadata.meter_type;
  const providerCode = deps.providers.providerCode(provider, row.productCode);
  return {
    reference: requestId,
    mode: row.mode,
    service: row.service as ProviderOrder["service"],
    network: row.network,
    productCode: row.productCode,
    destination: row.destination,
    amountKobo: row.amountKobo,
    requestedMb: product?.requestedMb ?? undefined,
    meterType: meterType === "prepaid" || meterType === "postpaid" ? meterType : undefined,
    phoneNumber: row.metadata.phone_number,
    ...(providerCode ? { providerCode } : {}),
  };
}

/** A provider's success as metadata: electricity token/units/receipt; data delivered vs requested. */
function successMetadata(
  order: ProviderOrder,
  outcome: Extract<ProviderOutcome, { status: "successful" }>,
): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const key of ["token", "units", "receipt_number"]) {
    const value = outcome.result?.[key];
    if (value !== undefined) metadata[key] = value;
  }
  if (order.service === "data" && order.requestedMb !== undefined) {
    const delivered = outcome.deliveredMb ?? order.requestedMb;
    metadata.requested_mb = String(order.requestedMb);
    metadata.delivered_mb = String(delivered);
    metadata.partial = String(delivered < order.requestedMb);
  }
  return metadata;
}

/** The client's reason for a provider's failure: the provider's own when it gave one, else what the call implies. */
const failureCodeOf = (outcome: Extract<ProviderOutcome, { status: "failed" }>, call: ProviderCall): FailureCode =>
  outcome.failureCode ?? (call === "vend" ? "provider_refused" : "not_delivered");

/** A provider's final answer to `call` as the transaction's outcome; null while it is not final. */
export function toFinalOutcome(order: ProviderOrder, outcome: ProviderOutcome, call: ProviderCall): FinalOutcome | null {
  if (outcome.status === "successful") {
    return { status: "successful", providerReference: outcome.providerReference, metadata: successMetadata(order, outcome) };
  }
  if (outcome.status === "failed") {
    const failureCode = failureCodeOf(outcome, call);
    return { status: "failed", providerReference: outcome.providerReference, reason: outcome.message, failureCode };
  }
  return null;
}

/** Why an order the provider says it never received was not sent again (`countProviderSend` refused it). */
const resendRefusal = (sends: number): string =>
  `The provider never received the order after ${sends} ${sends === 1 ? "send" : "sends"}; it was not sent again`;

function requeryDelaySeconds(config: Config, attempts: number): number {
  const schedule = config.worker.requerySchedule;
  return schedule[Math.min(Math.max(attempts - 1, 0), schedule.length - 1)] ?? 60;
}

/** What was asked of a provider: to vend the order, or where it stands. */
export type ProviderCall = "vend" | "requery";

/** A provider's answer to `call`, with the order as it was sent to it. */
type Answer = { order: ProviderOrder; call: ProviderCall; answerMs?: number } & (
  | { kind: "outcome"; outcome: ProviderOutcome | ProviderNotFound }
  | { kind: "unavailable"; error: ProviderUnavailableError }
);

/** Completes one transaction: alone (`completeTransaction`), or with others in one statement (`completionBatcher`). */
export type Completer = (request: CompletionRequest) => Promise<TransitionResult>;

const completeAlone =
  (deps: Pick<ProcessingDeps, "db" | "metrics">): Completer =>
  async ({ id, outcome, known, lease }) =>
    counted(deps.metrics, await completeTransaction(deps.db, id, outcome, known, lease));

/** One claim's job, with everything its steps share. */
interface OrderRun {
  deps: ProcessingDeps;
  claim: ClaimedTransaction;
  lease: LeaseWatch;
  service: ServiceCode;
  complete: Completer;
}

/**
 * One call to a provider (`callProvider`: timed, counted, its failure classified), its answer counted toward a live provider's health: a vend answered
 * (whatever it says) closes its breakers; no answer or an unreadable one (timeout, broken connection, 5xx,
 * garbage) counts toward opening them, for a vend or a re-query. An order's own failure (a refused number,
 * a low float) is no outage: counting it would let one client's bad orders shut a healthy provider. The
 * sandbox's deliberate failures never count.
 */
async function call(job: OrderRun, row: TransactionRow, what: ProviderCall): Promise<Answer> {
  const { deps, service } = job;
  const adapter = deps.providers.get(row.provider);
  if (!adapter) throw new Error(`no provider ${row.provider} for ${row.reference}`);
  const order = await toProviderOrder(deps, row);
  const live = row.mode === "live";
  job.lease.assertHeld();
  const answer = await callProvider<ProviderOutcome | ProviderNotFound>(deps, row.provider, what, () =>
    what === "vend" ? adapter.vend(order) : adapter.requery(order),
  );
  if (answer.kind === "answered") {
    if (what === "vend" && live) deps.providers.health.succeeded(row.provider, service);
    const outcome = answer.value;
    return { kind: "outcome", outcome, order, call: what, ...(what === "vend" ? { answerMs: answer.answerMs } : {}) };
  }
  const { error } = answer;
  if (live) deps.providers.health.failed(row.provider, service);
  deps.logger.warn(
    { reference: row.reference, provider: row.provider, err: error.message },
    `provider unavailable on ${what}; its fate there is unknown`,
  );
  return {
    kind: "unavailable",
    error,
    order,
    call: what,
    ...(what === "vend" && error.answered ? { answerMs: answer.answerMs } : {}),
  };
}

/**
 * The first provider of the order's route, other than those in `exclude`, that may take it now. With
 * `probe` (about to send) a half-open one takes it as its probe; without, nothing is reserved.
 */
function usableProvider(job: OrderRun, row: TransactionRow, exclude: ReadonlySet<string>, probe: boolean): string | undefined {
  const product = { service: job.service, network: row.network };
  return job.deps.providers
    .candidates(row.mode, product)
    .find((name) => !exclude.has(name) && job.deps.providers.health.usable(name, job.service, probe));
}

/** The providers an order has been sent to, the one it is with included. */
async function triedProviders(job: OrderRun, row: TransactionRow): Promise<Set<string>> {
  return new Set([...(await attemptedProviders(job.deps.db, row.id)), row.provider]);
}

function complete(job: OrderRun, row: TransactionRow, outcome: FinalOutcome): Promise<TransitionResult> {
  return job.complete({ id: row.id, outcome, known: row, lease: job.claim });
}

/**
 * The order stays `pending`, re-queried on the schedule; a re-query that would fall later than
 * `requeryMaxAgeHours` after acceptance is not scheduled (`next_attempt_at` null, so no worker claims it
 * again): the order is left for operators (it is raised as stuck and resolved by hand).
 */
async function pending(job: OrderRun, row: TransactionRow, attempt: AttemptAnswer, providerReference?: string) {
  const { config, db, logger } = job.deps;
  const next = {
    afterSeconds: requeryDelaySeconds(config, job.claim.attempts),
    stopAfterHours: config.operations.requeryMaxAgeHours,
  };
  const result = await markPending(db, row.id, next, providerReference, job.claim, attempt);
  if (result.stopped && result.changed) {
    logger.warn(
      {
        reference: row.reference,
        provider: row.provider,
        ageHours: result.ageHours,
      },
      "re-queries stopped; left for operators",
    );
  }
  return counted(job.deps.metrics, result, job.claim.previousStatus);
}

/** Sends the order to the provider it is with (its send already counted) and acts on the answer. */
async function send(job: OrderRun, row: TransactionRow): Promise<TransitionResult> {
  const answer = await call(job, row, "vend");
  if (answer.kind === "outcome") return settle(job, row, answer);
  // An answer we cannot read means the provider is done with the request, so its re-query tells its fate
  // now; worth asking at once only when the order could move on. Otherwise it waits for the schedule.
  const canMoveOn = answer.error.answered && usableProvider(job, row, await triedProviders(job, row), false) !== undefined;
  if (canMoveOn) return requery(job, row, answer.answerMs);
  return pending(job, row, { status: "unknown", message: answer.error.message, answerMs: answer.answerMs });
}

/** Asks the provider the order is with where it stands, and acts on the answer. */
async function requery(job: OrderRun, row: TransactionRow, answerMs?: number): Promise<TransitionResult> {
  const answer = await call(job, row, "requery");
  if (answer.kind === "unavailable") return pending(job, row, { status: "unknown", message: answer.error.message, answerMs });
  return settle(job, row, { ...answer, answerMs });
}

async function settle(
  job: OrderRun,
  row: TransactionRow,
  { outcome, order, call, answerMs }: Extract<Answer, { kind: "outcome" }>,
): Promise<TransitionResult> {
  if (outcome.status === "not_found") {
    const answer: AttemptAnswer = { status: "not_received", message: "The provider never received the order", answerMs };
    return notDelivered(job, row, answer, "provider_unavailable");
  }
  if (outcome.status === "failed") {
    const answer: AttemptAnswer = { status: "failed", message: outcome.message, answerMs };
    return notDelivered(job, row, answer, failureCodeOf(outcome, call), outcome.providerReference);
  }
  if (outcome.status === "pending") {
    return pending(job, row, { status: "pending", message: outcome.message, answerMs }, outcome.providerReference);
  }
  const final = toFinalOutcome(order, outcome, call);
  return complete(job, row, { ...(final as FinalOutcome), attempt: { status: "successful", answerMs } });
}

/**
 * The provider the order is with said definitively that it did not deliver it (it failed or refused it,
 * or never received it). The order moves on to the next provider of its route it has not been sent to;
 * with none left, an order the provider never received is sent to it again while the re-send bound
 * allows, and otherwise fails (`provider_unavailable`: it never reached a provider); a failure fails with
 * the client's reason `failureCode`.
 */
async function notDelivered(
  job: OrderRun,
  row: TransactionRow,
  answer: AttemptAnswer,
  failureCode: FailureCode,
  providerReference?: string,
): Promise<TransitionResult> {
  const { deps, claim } = job;
  const tried = await triedProviders(job, row);
  const next = usableProvider(job, row, tried, true);
  if (next) {
    job.lease.assertHeld();
    const requestId = requestIdFor(row.reference, tried.size + 1);
    const moved = await switchProvider(
      deps.db,
      row,
      claim,
      { provider: next, requestId, costKobo: costAt(deps.config, next, row) },
      { answer },
      deps.config.worker.leaseSeconds,
    );
    if (!moved) throw new LeaseLostError(row.reference);
    deps.logger.info(
      { reference: row.reference, from: row.provider, to: next, reason: answer.message },
      "order moved to the next provider of its route",
    );
    return send(job, moved);
  }
  if (answer.status === "not_received") {
    job.lease.assertHeld();
    const resend = await countProviderSend(deps.db, claim, deps.config.worker);
    if (resend === null) throw new LeaseLostError(row.reference);
    if (resend.refused) {
      const refusal = resendRefusal(resend.sends);
      const attempt = { ...answer, message: refusal };
      return complete(job, row, { status: "failed", reason: refusal, failureCode: "provider_unavailable", attempt });
    }
    return send(job, { ...row, providerSends: resend.sends });
  }
  return complete(job, row, {
    status: "failed",
    providerReference,
    reason: answer.message ?? "Declined by provider",
    failureCode,
    attempt: answer,
  });
}

/** What `provider` charges our float for the order, by the commission this process was configured with. */
const costAt = (config: Config, provider: string, row: TransactionRow) =>
  providerCostKobo(config.routing, provider, { ...row, mode: row.mode });

/**
 * How long a new order none of whose providers may take it waits before it is claimed again: about a
 * breaker's cool-down (between 1 and 30 s), so a long outage does not churn the backlog.
 */
const deferMs = (config: Config) => Math.min(Math.max(config.routing.breaker.cooldownMs, 1000), 30_000);

/**
 * Runs one claimed transaction to its next state. A new order goes to the first provider of its route
 * that may take it now (the one chosen at acceptance, unless it has since been disabled or its breaker
 * opened); a re-take (lost lease, earlier timeout) or a pending re-check asks the provider it is with
 * first, and moves on only on a definitive "not delivered", so one order is never delivered twice. While
 * a provider's fate is unknown the order stays `pending` with it. Its transitions are guarded on the
 * claim, so if another worker has taken the job meanwhile they change nothing (`changed: false`); a
 * lease found lost before a provider call throws LeaseLostError. Its completion goes through `complete`
 * (a worker's batches), by default alone.
 */
export async function processClaimed(
  deps: ProcessingDeps,
  claim: ClaimedTransaction,
  lease: LeaseWatch = unwatchedLease,
  complete: Completer = completeAlone(deps),
): Promise<TransitionResult> {
  const job: OrderRun = { deps, claim, lease, service: claim.row.service as ServiceCode, complete };
  const row = claim.row;
  if (claim.previousStatus !== "queued") return requery(job, row);
  const first = usableProvider(job, row, new Set(), true);
  if (!first) {
    const deferred = await deferUnsent(deps.db, row, claim, deferMs(deps.config));
    return { row: { ...row, status: "queued" }, changed: deferred };
  }
  if (first === row.provider) return send(job, row);
  const moved = await switchProvider(
    deps.db,
    row,
    claim,
    { provider: first, requestId: row.providerRequestId ?? row.reference, costKobo: costAt(deps.config, first, row) },
    null,
    deps.config.worker.leaseSeconds,
  );
  if (!moved) throw new LeaseLostError(row.reference);
  return send(job, moved);
}
