import type { Mode, OperatorRole } from "../../generated/constants.ts";

export type { Mode } from "../../generated/constants.ts";

/**
 * Whose books an operation acts on: one account's test or live side. A key belongs to one scope; its
 * wallet, transactions, webhook endpoints and events are that scope's, and one scope never sees another's.
 */
export interface Scope {
  accountId: string;
  mode: Mode;
}

/** An authenticated API key: the scope it acts for, and its id (rate limits, logs). */
export interface ApiPrincipal extends Scope {
  keyId: string;
}

/** Who is calling the admin API: an operator, or the bootstrap `ADMIN_TOKEN` (id null, role admin). */
export interface OperatorPrincipal {
  operatorId: string | null;
  name: string;
  role: OperatorRole;
}

/** What authentication yields: an API key's principal, an operator, or nothing (public and provider operations). */
export type Principal = ApiPrincipal | OperatorPrincipal | null;

export const isOperator = (principal: Principal): principal is OperatorPrincipal => principal !== null && "role" in principal;

/** One admin change, as the http layer reports it for the audit trail once the operation has succeeded. */
export interface AdminAction {
  operator: OperatorPrincipal;
  action: string;
  target: { type: string; id: string };
  requestId: string;
  before?: unknown;
  after?: unknown;
  note?: string | null;
}
