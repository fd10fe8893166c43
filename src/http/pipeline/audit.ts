import type { Executor } from "../../db/transaction.ts";
import { isDatabaseUnavailable } from "../../db/unavailable.ts";
import { AppError } from "../../errors.ts";
import type { AdminAction, OperatorPrincipal } from "../../lib/scope.ts";
import type { Logger } from "../../logger.ts";
import type { OperationSpec } from "../spec.ts";
import type { Outcome } from "./result.ts";

export interface AuditDeps {
  logger: Logger;
  /** Writes the audit entry of an admin operation that changed something, on the change's own transaction. */
  recordAdminAction(db: Executor, action: AdminAction): Promise<void>;
}

/** Whether an operation is audited: an operator's operation that may change something (every role above viewer). */
export const auditsChanges = (op: OperationSpec, operator: OperatorPrincipal | null): operator is OperatorPrincipal =>
  operator !== null && op.requiredRole !== "viewer";

/** The kind of thing an admin path acts on: the collection before its first parameter, singular (`/admin/v1/keys/{key_id}` → api_key). */
function targetTypeOf(op: OperationSpec): string {
  const segments = op.path.split("/");
  const param = segments.findIndex((segment) => segment.startsWith("{"));
  const collection = segments[param > 0 ? param - 1 : segments.length - 1] ?? "";
  return collection === "keys" ? "api_key" : collection.replace(/s$/, "");
}

/** The audit entry of an admin operation's outcome; null when it changed nothing (a refusal, a replayed answer). */
export function adminActionOf(
  op: OperationSpec,
  run: {
    operator: OperatorPrincipal;
    requestId: string;
    input: { body: unknown; params: Record<string, string> };
    result: Outcome<unknown>;
  },
): AdminAction | null {
  const { result, input } = run;
  if (result.status >= 300 || result.headers?.["idempotent-replayed"] === "true") return null;
  const detail = "data" in result ? result.audit : undefined;
  const pathTarget = Object.values(input.params)[0];
  const target = detail?.target ?? { type: targetTypeOf(op), id: pathTarget ?? "" };
  const body = input.body as { note?: unknown; reason?: unknown } | undefined;
  const bodyNote = body?.note ?? body?.reason;
  return {
    operator: run.operator,
    action: op.operationId,
    target,
    requestId: run.requestId,
    before: detail?.before,
    after: "data" in result ? result.data : undefined,
    note: detail?.note ?? (typeof bodyNote === "string" ? bodyNote : null),
  };
}

/**
 * Writes the audit entry of a successful admin change on `tx`, the change's own transaction, so both
 * commit or neither does: an entry that cannot be written is logged at error and fails the request
 * (500), and the change rolls back with it.
 */
export async function audit(deps: AuditDeps, tx: Executor, action: AdminAction | null): Promise<void> {
  if (!action) return;
  try {
    await deps.recordAdminAction(tx, action);
  } catch (error) {
    // An unreachable database is answered as such (503, retry), like any other statement it refuses.
    if (isDatabaseUnavailable(error)) throw error;
    deps.logger.error(
      {
        err: error instanceof Error ? error.message : String(error),
        request_id: action.requestId,
        action: action.action,
        target: action.target,
        operator: action.operator.name,
      },
      "audit entry could not be written; the change is rolled back",
    );
    throw new AppError(
      "INTERNAL_ERROR",
      `The change was not made: its audit entry could not be written; quote request id ${action.requestId} to support`,
    );
  }
}
