// Shared by the server and the CLI: pure (no database, configuration or feature code).
import type { TransactionStatus } from "../../../generated/constants.ts";

/** The public flow ends at these: the service moves a transaction out of neither. */
export const finalStatuses = ["successful", "failed"] as const satisfies readonly TransactionStatus[];

/**
 * Statuses nothing moves a transaction out of: the final ones, and `reversed` and `refunded`, which the
 * contract lists but nothing sets. Someone watching a transaction stops at any of them.
 */
export const terminalStatuses = [...finalStatuses, "reversed", "refunded"] as const satisfies readonly TransactionStatus[];
