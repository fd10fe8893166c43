import type { OperatorRole } from "../../../generated/constants.ts";
import { AppError } from "../../errors.ts";
import { isOperator, type Principal } from "../../lib/scope.ts";
import type { OperationSpec } from "../spec.ts";

const roleRank: Record<OperatorRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether an operator with `role` may run an operation that needs `required`. */
export const roleAllows = (role: OperatorRole, required: OperatorRole): boolean => roleRank[role] >= roleRank[required];

/** An operator may run an admin operation only with its role or a higher one (403); API keys are scoped elsewhere. */
export function authorize(op: OperationSpec, principal: Principal): void {
  if (!isOperator(principal) || roleAllows(principal.role, op.requiredRole)) return;
  throw new AppError("FORBIDDEN", `${op.operationId} needs the ${op.requiredRole} role; ${principal.name} is ${principal.role}`);
}
