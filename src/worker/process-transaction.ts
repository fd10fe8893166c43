import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { Logger } from "../logger.ts";
import type { TransactionRow } from "../processing/present.ts";
import { findProduct, type ProductCache } from "../processing/products.ts";
import { completeTransaction, type FinalOutcome, markPending, type TransitionResult } from "../processing/transitions.ts";
import type { Providers } from "../providers/registry.ts";
import { type ProviderOrder, type ProviderOutcome, ProviderUnavailableError } from "../providers/types.ts";
import { type ClaimedTransaction, countProviderSend } from "./claim.ts";
import { LeaseLostError, type LeaseWatch, unwatchedLease } from "./lease.ts";

export interface ProcessingDeps {
  db: Database;
  caches: { products: ProductCache };
  providers: Providers;
  config: Config;
  logger: Logger;
}

/** The provider's view of a transaction (the product comes from the process's catalogue cache). */
export async function toProviderOrder(deps: Pick<ProcessingDeps, "db" | "caches">, row: TransactionRow): Promise<ProviderOrder> {
  const product = await deps.caches.products.getOrLoad(row.productCode, () => findProduct(deps.db, row.productCode));
  const meterType = row.metadata.meter_type;
  return {
    reference: row.reference,
    mode: row.mode,
    service: row.service as ProviderOrder["service"],
    network: row.network,
    productCode: row.productCode,
    destination: row.destination,
    amountKobo: row.amountKobo,
    requestedMb: product?.requestedMb ?? undefined,
    meterType: meterType === "prepaid" || meterType === "postpaid" ? meterType : undefined,
    phoneNumber: row.metadata.phone_number,
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

export function toFinalOutcome(order: ProviderOrder, outcome: ProviderOutcome): FinalOutcome | null {
  if (outcome.status === "successful") {
    return { status: "successful", providerReference: outcome.providerReference, metadata: successMetadata(order, outcome) };
  }
  if (outcome.status === "failed")
    return { status: "failed", providerReference: outcome.providerReference, reason: outcome.message };
  return null;
}

/**
 * Why an order the provider says it never received is not sent again: it has been sent
 * `maxSends` times, or it is older than `maxResendAgeSeconds`. Null while a re-send is allowed.
 */
function resendRefusal(config: Config, row: TransactionRow): string | null {
  const { maxSends, maxResendAgeSeconds } = config.worker;
  const sends = row.providerSends;
  if (sends < maxSends && Date.now() - row.createdAt.getTime() < maxResendAgeSeconds * 1000) return null;
  return `The provider never received the order after ${sends} ${sends === 1 ? "send" : "sends"}; it was not sent again`;
}

/**
 * Asks the provider about a claimed transaction. A first claim vends (its send was counted by the
 * claim). A re-take (lost lease, earlier timeout) or a pending re-check re-queries first and vends
 * only if the provider never received the order, so one order is never vended twice; and only
 * while the re-send bound allows, else the order fails. Each send is counted before it goes out.
 * An unreachable provider leaves the order's fate unknown: it becomes `pending` and is re-queried
 * later. Before every provider call the job checks it still holds its lease.
 */
async function askProvider(
  deps: ProcessingDeps,
  row: TransactionRow,
  order: ProviderOrder,
  claim: ClaimedTransaction,
  lease: LeaseWatch,
): Promise<ProviderOutcome> {
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new Error(`no provider ${row.provider} for ${row.reference}`);
  try {
    lease.assertHeld();
    if (claim.previousStatus === "queued") return await provider.vend(order);
    const known = await provider.requery(order);
    if (known.status !== "not_found") return known;
    const refusal = resendRefusal(deps.config, row);
    if (refusal) return { status: "failed", message: refusal };
    lease.assertHeld();
    if ((await countProviderSend(deps.db, claim, deps.config.worker.leaseSeconds)) === null)
      throw new LeaseLostError(row.reference);
    return await provider.vend(order);
  } catch (error) {
    if (!(error instanceof ProviderUnavailableError)) throw error;
    deps.logger.warn(
      { reference: row.reference, provider: row.provider, err: error.message },
      "provider unavailable; will re-query",
    );
    return { status: "pending", message: error.message };
  }
}

function requeryDelaySeconds(config: Config, attempts: number): number {
  const schedule = config.worker.requerySchedule;
  return schedule[Math.min(Math.max(attempts - 1, 0), schedule.length - 1)] ?? 60;
}

/**
 * Runs one claimed transaction to its next state. Its transitions are guarded on the claim, so if
 * another worker has taken the job meanwhile they change nothing (`changed: false`); a lease found
 * lost before a provider call throws LeaseLostError.
 */
export async function processClaimed(
  deps: ProcessingDeps,
  claim: ClaimedTransaction,
  lease: LeaseWatch = unwatchedLease,
): Promise<TransitionResult> {
  const row = claim.row;
  const order = await toProviderOrder(deps, row);
  const outcome = await askProvider(deps, row, order, claim, lease);
  const final = toFinalOutcome(order, outcome);
  if (final) return completeTransaction(deps.db, row.id, final, row, claim);
  const next = new Date(Date.now() + requeryDelaySeconds(deps.config, claim.attempts) * 1000);
  return markPending(deps.db, row.id, next, outcome.providerReference, claim);
}
