import { eq } from "drizzle-orm";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, notFound } from "../errors.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { counted } from "../processing/counted.ts";
import type { TransactionRow } from "../processing/present.ts";
import { completeTransaction, type FinalOutcome, isFinal } from "../processing/transitions.ts";
import { ProviderUnavailableError } from "../providers/types.ts";
import { type ProcessingDeps, toFinalOutcome, toProviderOrder } from "../worker/process-transaction.ts";

/** Where an order stood when its provider was asked, and the final outcome the provider's answer brings (null: none). */
export interface ProviderAnswer {
  row: TransactionRow;
  final: FinalOutcome | null;
}

/**
 * An operator's re-query, first half: asks the transaction's provider where the order stands, on no
 * transaction (a provider may read the database, and the call may take its whole timeout). Never vends.
 */
export async function askProvider(deps: ProcessingDeps, reference: string): Promise<ProviderAnswer> {
  const [row] = await deps.db.select().from(transactions).where(eq(transactions.reference, reference));
  if (!row) throw notFound("Transaction");
  if (isFinal(row.status)) return { row, final: null };
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} is not configured in this process`);
  const order = await toProviderOrder(deps, row);
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const known = await provider.requery(order);
    deps.metrics?.providerCalled(row.provider, "requery", seconds());
    return { row, final: known.status === "not_found" ? null : toFinalOutcome(order, known, "requery") };
  } catch (error) {
    if (error instanceof ProviderUnavailableError) {
      deps.metrics?.providerCalled(row.provider, "requery", seconds(), error.answered ? "unreadable" : "unanswered");
      throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} did not answer the re-query`);
    }
    throw error;
  }
}

/** Second half: applies a final answer on `db` (the change's transaction) through the guarded completion; the order as it stands. */
export async function applyProviderAnswer(
  db: Executor,
  metrics: Metrics | undefined,
  answer: ProviderAnswer,
): Promise<TransactionRow> {
  if (!answer.final) return answer.row;
  return counted(metrics, await completeTransaction(db, answer.row.id, answer.final, answer.row)).row;
}
