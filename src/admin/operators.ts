import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import type { Handlers } from "../http/operations.ts";

const notYet = async (): Promise<never> => {
  throw new AppError("NOT_IMPLEMENTED", "Operators are being built");
};

/** Operators and the audit trail (being built). */
export function operatorRoutes(_deps: AppDeps) {
  return {
    listOperators: notYet,
    createOperator: notYet,
    getCurrentOperator: notYet,
    revokeOperator: notYet,
    listAuditEntries: notYet,
  } satisfies Partial<Handlers>;
}
