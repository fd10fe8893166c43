import type { FailureCode } from "../../generated/constants.ts";
import { finalStatuses } from "../lib/shared/statuses.ts";
import { failureMetadata } from "./failures.ts";
import type { TransactionRow } from "./view.ts";

export type Status = TransactionRow["status"];
export const isFinal = (status: Status) => (finalStatuses as readonly Status[]).includes(status);

/**
 * The transitions the service makes. Anything else changes nothing.
 * `reversed` and `refunded` are never set; `created` is not used.
 */
export const allowedFrom: Record<"processing" | "pending" | "successful" | "failed", readonly Status[]> = {
  processing: ["queued"],
  pending: ["processing", "pending"],
  successful: ["processing", "pending"],
  failed: ["processing", "pending"],
};

/** What the provider's answer says of its attempt (provider_attempts), when it is not simply the final status. */
export interface AttemptAnswer {
  status: "pending" | "unknown" | "successful" | "failed" | "not_received";
  message?: string;
  /** How long the provider took to answer the vend. */
  answerMs?: number;
  /** The provider whose attempt it is; absent: the one the order is with. */
  provider?: string;
}

export type FinalOutcome = (
  | { status: "successful"; providerReference?: string; metadata?: Record<string, string> }
  | {
      status: "failed";
      providerReference?: string;
      /** What operators read (`failure_reason`): the provider's or operator's own words. */
      reason: string;
      /** What the client reads: metadata `failure_code` and the service's `failure_message` for it. */
      failureCode: FailureCode;
      metadata?: Record<string, string>;
    }
) & {
  attempt?: AttemptAnswer;
  /** The note of the capture or release ledger entry (an operator's resolution); completed alone, not in a batch. */
  ledgerNote?: string;
};

/** The answer recorded on the attempt when the outcome does not say more. */
export const attemptAnswerOf = (outcome: FinalOutcome): AttemptAnswer =>
  outcome.attempt ?? { status: outcome.status, message: outcome.status === "failed" ? outcome.reason : undefined };

/**
 * A worker's claim on a transaction (its lease owner and the claim's `attempts`). A worker's
 * transitions are guarded on it, so a worker whose lease was taken over changes nothing.
 * Provider callbacks and operator re-queries transition without one.
 */
export interface LeaseGuard {
  leaseOwner: string;
  attempts: number;
}

export const holdsLease = (row: TransactionRow, lease: LeaseGuard | undefined) =>
  !lease || (row.leaseOwner === lease.leaseOwner && row.attempts === lease.attempts);

export interface TransitionResult {
  row: TransactionRow;
  /** False when the guard did not match: the transaction was already elsewhere (e.g. final). */
  changed: boolean;
}

/**
 * The row as a completion leaves it: what the event reports and the caller gets back. A failed one carries
 * `failure_code` and `failure_message` in its metadata, written by the same guarded statement as the status,
 * so the event, the final announcement and every read agree.
 */
export function finalRow(row: TransactionRow, outcome: FinalOutcome, completedAt: Date): TransactionRow {
  return {
    ...row,
    status: outcome.status,
    completedAt,
    updatedAt: completedAt,
    metadata: {
      ...row.metadata,
      ...outcome.metadata,
      ...(outcome.status === "failed" ? failureMetadata(outcome.failureCode) : {}),
    },
    providerReference: outcome.providerReference ?? row.providerReference,
    failureReason: outcome.status === "failed" ? outcome.reason : null,
    leaseOwner: null,
    leaseExpiresAt: null,
    nextAttemptAt: null,
  };
}
