import { eq } from "drizzle-orm";
import { transactions } from "../db/schema/index.ts";
import { AppError, notFound } from "../errors.ts";
import { callProvider } from "../providers/call.ts";
import { completeTransaction } from "./completion.ts";
import { counted } from "./counted.ts";
import { type ProcessingDeps, toFinalOutcome, toProviderOrder } from "./processing.ts";
import { isFinal } from "./states.ts";
import type { TransactionRow } from "./view.ts";

/**
 * Operator re-query: asks the transaction's provider where the order stands and applies a final
 * answer through the same guarded transition as the worker. Never vends.
 */
export async function requeryAtProvider(deps: ProcessingDeps, reference: string): Promise<TransactionRow> {
  const [row] = await deps.db.select().from(transactions).where(eq(transactions.reference, reference));
  if (!row) throw notFound("Transaction");
  if (isFinal(row.status)) return row;
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} is not configured in this process`);
  const order = await toProviderOrder(deps, row);
  const answer = await callProvider(deps, row.provider, "requery", () => provider.requery(order));
  if (answer.kind === "unavailable") throw new AppError("PROVIDER_ERROR", `Provider ${row.provider} did not answer the re-query`);
  const known = answer.value;
  if (known.status === "not_found") return row;
  const final = toFinalOutcome(order, known, "requery");
  return final ? counted(deps.metrics, await completeTransaction(deps.db, row.id, final, row)).row : row;
}
