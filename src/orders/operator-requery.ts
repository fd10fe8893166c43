import { eq } from "drizzle-orm";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, notFound } from "../errors.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { callProvider } from "../providers/call.ts";
import { completeTransaction } from "./completion.ts";
import { counted } from "./counted.ts";
import { type ProcessingDeps, toFinalOutcome, toProviderOrder } from "./processing.ts";
import { type FinalOutcome, isFinal } from "./states.ts";
import type { TransactionRow } from "./view.ts";

/** Where an order stood when its provider was asked, and the final outcome the provider's answer brings (null: none). */
export interface ProviderAnswer {
  row: TransactionRow;
  final: FinalOutcome | null;
}

/**
 * An operator's re-query, first half: asks the transaction's provider where the order stands, on no
 * transaction (a provider may read the database, and the call may take its whole timeout). Never vends.
 */
export async function askProvider(
  deps: Pick<ProcessingDeps, "db" | "caches" | "providers" | "metrics">,
  reference: string,
): Promise<ProviderAnswer> {
  const [row] = await deps.db.select().from(transactions).where(eq(transactions.reference, reference));
  if (!row) throw notFound("Transaction");
  if (isFinal(row.status)) return { row, final: null };
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} is not configured in this process`);
  const order = await toProviderOrder(deps, row);
  const answer = await callProvider(deps, row.provider, "requery", () => provider.requery(order));
  if (answer.kind === "unavailable") throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} did not answer the re-query`);
  const known = answer.value;
  return { row, final: known.status === "not_found" ? null : toFinalOutcome(order, known, "requery") };
}

/**
 * Second half: applies a final answer on `db` (an admin change's transaction) through the guarded completion,
 * as the worker would; answers the order as it stands.
 */
export async function applyProviderAnswer(
  db: Executor,
  metrics: Metrics | undefined,
  answer: ProviderAnswer,
): Promise<TransactionRow> {
  if (!answer.final) return answer.row;
  return counted(metrics, await completeTransaction(db, answer.row.id, answer.final, answer.row)).row;
}
