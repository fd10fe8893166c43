import type { components } from "../../generated/openapi-types.ts";
import { newInstantToken } from "../db/clock.ts";
import { randomBase62 } from "../lib/random.ts";
import type { Mode } from "../lib/scope.ts";

/*
 * The outbox: the events a change reports, written in the change's own database transaction with one pending
 * delivery per endpoint that gets them (the rule is the database's `vend_webhook_endpoints_for`, migration 0020),
 * and the NOTIFY that wakes delivery. This file shapes the events; the statements that write them are in
 * statements/: `emitEach` (a fragment of the completion statement), `enqueueTransactionEvent`,
 * `enqueueAccountEvent`, `enqueueSubscribedEvents` and `scheduleEventDeliveries` (each a statement of its own).
 */

type Transaction = components["schemas"]["Transaction"];
type EventType = components["schemas"]["EventType"];

/** A new event id: `evt_` and 24 random base62 characters. */
export const newEventId = (): string => `evt_${randomBase62(24)}`;

export interface OutboxEvent {
  id: string;
  type: "transaction.successful" | "transaction.failed";
  /**
   * Stands for the event's creation time (the database clock, see `newInstantToken`) in the payload until
   * the statement that writes it puts the instant in.
   */
  createdAt: string;
  /** What webhooks carry: the event with the transaction as the API shows it. */
  payload: {
    id: string;
    type: "transaction.successful" | "transaction.failed";
    created_at: string;
    mode: Mode;
    data: Transaction;
  };
}

/**
 * The `transaction.successful|failed` event for a final transaction, given as the API shows it; its
 * `created_at` is `createdAt`, by default a new stand-in for the database clock.
 */
export function buildTransactionEvent(transaction: Transaction, createdAt = newInstantToken()): OutboxEvent {
  const id = newEventId();
  const type = transaction.status === "successful" ? "transaction.successful" : "transaction.failed";
  return { id, type, createdAt, payload: { id, type, created_at: createdAt, mode: transaction.mode, data: transaction } };
}

/** An event about something other than one transaction: a batch, the wallet, the catalogue, an endpoint. */
export interface AccountEvent {
  accountId: string;
  mode: Mode;
  type: Exclude<EventType, "transaction.successful" | "transaction.failed">;
  data: Record<string, unknown>;
}

/** An event about something every account sees alike (the catalogue): its type and `data`. */
export interface SharedEvent {
  type: Exclude<EventType, "transaction.successful" | "transaction.failed">;
  data: Record<string, unknown>;
}

/** Which accounts an event is for: every account, the accounts on one price plan, or one account. */
export type Audience = { everyone: true } | { pricePlan: string } | { accountId: string };
