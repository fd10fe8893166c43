import { eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, type FieldError, notFound, validationError } from "../errors.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { completeTransaction } from "./completion.ts";
import { counted } from "./counted.ts";
import { type FinalOutcome, isFinal } from "./states.ts";
import { type AdminTransaction, presentAdminTransaction, providerAttemptsOf, type TransactionRow } from "./view.ts";

export type ResolveRequest = components["schemas"]["ResolveTransactionRequest"];

/** What the request may carry for this order: a token only for a successful electricity one, which needs it. */
function problemsOf(row: TransactionRow, request: ResolveRequest): FieldError[] {
  const electricitySuccess = row.service === "electricity" && request.status === "successful";
  if (electricitySuccess) {
    return request.token === undefined ? [{ field: "token", message: "is required for a successful electricity order" }] : [];
  }
  const why = request.status === "failed" ? "is only for a successful order" : "is only for electricity orders";
  return (["token", "units"] as const).filter((field) => request[field] !== undefined).map((field) => ({ field, message: why }));
}

function outcomeOf(request: ResolveRequest): FinalOutcome {
  const metadata: Record<string, string> = { resolved_by_operator: "true" };
  if (request.token !== undefined) metadata.token = request.token;
  if (request.units !== undefined) metadata.units = request.units;
  const shared = {
    providerReference: request.provider_reference,
    metadata,
    ledgerNote: `Resolved by operator: ${request.note}`,
    attempt: { status: request.status, message: "Resolved by an operator" },
  };
  return request.status === "successful"
    ? { status: "successful", ...shared }
    : { status: "failed", reason: request.note, failureCode: "resolved_by_operator", ...shared };
}

const conflict = (row: TransactionRow) =>
  new AppError(
    "CONFLICT",
    isFinal(row.status)
      ? `Transaction ${row.reference} is already ${row.status}; nothing changed`
      : `Transaction ${row.reference} has not been sent to a provider yet (status ${row.status}); nothing changed`,
  );

/**
 * An operator's resolution of an open order (`pending`, or `processing` with a provider): completes it
 * through the same guarded completion as a provider callback (capture or release once, ledger entry with
 * the note, event and client webhook). An order final before or during the request is `409 CONFLICT`,
 * and nothing changes: of two resolutions, or a resolution and a callback, exactly one applies. Answers
 * the order before and after (the audit keeps both).
 */
export async function resolveTransaction(
  deps: { db: Executor; metrics?: Metrics },
  reference: string,
  request: ResolveRequest,
): Promise<{ before: AdminTransaction; after: AdminTransaction }> {
  const { db } = deps;
  const [row] = await db.select().from(transactions).where(eq(transactions.reference, reference)).limit(1);
  if (!row) throw notFound("Transaction");
  const problems = problemsOf(row, request);
  if (problems.length > 0) throw validationError(problems);
  if (row.status !== "pending" && row.status !== "processing") throw conflict(row);
  const before = presentAdminTransaction(row, await providerAttemptsOf(db, row.id));
  const result = counted(deps.metrics, await completeTransaction(db, row.id, outcomeOf(request), row), row.status);
  if (!result.changed) throw conflict(result.row);
  return { before, after: presentAdminTransaction(result.row, await providerAttemptsOf(db, row.id)) };
}
