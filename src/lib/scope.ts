import type { Mode } from "../../generated/constants.ts";

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
