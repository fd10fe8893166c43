import { asc, eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { providerAttempts, type transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { maskDestination } from "../lib/mask.ts";
import { failureKeys, isFailureCode } from "./failures.ts";

export type Transaction = components["schemas"]["Transaction"];
export type AdminTransaction = components["schemas"]["AdminTransaction"];
export type TransactionRow = typeof transactions.$inferSelect;

/** Metadata keys that hold a copy of the destination and are masked like it. */
const maskedMetadataKeys = ["meter_number", "phone_number", "smartcard_number"];

function presentMetadata(row: TransactionRow): Record<string, string> {
  const out = { ...row.metadata };
  for (const key of maskedMetadataKeys) {
    const value = out[key];
    if (value !== undefined) out[key] = maskDestination(value);
  }
  // Rows accepted before the failure keys were the service's may hold a caller's values for them.
  if (row.status !== "failed" || !isFailureCode(out.failure_code)) for (const key of failureKeys) delete out[key];
  return out;
}

/** The public shape of a transaction: destination and its metadata copies masked. */
export function presentTransaction(row: TransactionRow): Transaction {
  return {
    id: row.id,
    reference: row.reference,
    client_reference: row.clientReference,
    mode: row.mode,
    status: row.status,
    product_code: row.productCode,
    network: row.network,
    service: row.service as Transaction["service"],
    destination: maskDestination(row.destination),
    amount_kobo: row.amountKobo,
    price_kobo: row.priceKobo,
    metadata: presentMetadata(row),
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

type AttemptRow = typeof providerAttempts.$inferSelect;
type ProviderAttempt = components["schemas"]["ProviderAttempt"];

const presentAttempt = (a: AttemptRow): ProviderAttempt => ({
  provider: a.provider,
  request_id: a.requestId,
  status: a.status,
  message: a.message,
  provider_reference: a.providerReference,
  sent_at: a.sentAt.toISOString(),
  answered_at: a.answeredAt?.toISOString() ?? null,
  answer_ms: a.answerMs,
  cost_kobo: a.costKobo,
});

/** The operators' view: the account, the provider the order is with and, when given, every attempt at a provider. */
export function presentAdminTransaction(row: TransactionRow, attempts?: AttemptRow[]): AdminTransaction {
  const { id, ...rest } = presentTransaction(row);
  const view: AdminTransaction = {
    id,
    account_id: row.accountId,
    ...rest,
    provider: row.provider,
    stuck_raised_at: row.stuckRaisedAt?.toISOString() ?? null,
  };
  if (attempts) view.provider_attempts = attempts.map(presentAttempt);
  return view;
}

/** A transaction's attempts at providers, in the order they were sent. */
export function providerAttemptsOf(db: Executor, transactionId: string): Promise<AttemptRow[]> {
  return db
    .select()
    .from(providerAttempts)
    .where(eq(providerAttempts.transactionId, transactionId))
    .orderBy(asc(providerAttempts.sentAt), asc(providerAttempts.id));
}
