import type { Executor } from "../db/transaction.ts";
import { successEnvelope } from "../errors.ts";
import type { Scope } from "../lib/scope.ts";
import type { OperationId, OperationResult, SuccessDataOf } from "./operations.ts";

/** What one idempotent request is scoped to: the key plus the account (or admin), method and operation. */
export interface IdempotencyKey {
  scope: string;
  method: string;
  path: string;
  key: string;
}

export interface StoredAnswer {
  status: number;
  body: string;
}

/**
 * The Idempotency-Key protocol, injected (src/idempotency/protocol.ts implements it): runs `execute` at most
 * once per key in one database transaction with the record of its answer (a savepoint when `db` is a
 * transaction already), or replays the stored answer.
 */
export type RunIdempotent = (
  db: Executor,
  id: IdempotencyKey,
  body: unknown,
  execute: (tx: Executor) => Promise<StoredAnswer>,
) => Promise<StoredAnswer & { replayed: boolean }>;

export interface IdempotentWork<Id extends OperationId> {
  status: number;
  data: SuccessDataOf<Id>;
  message?: string;
}

const serialise = <Id extends OperationId>(work: IdempotentWork<Id>) => ({
  status: work.status,
  body: JSON.stringify(successEnvelope(work.data, work.message)),
});

/**
 * What a key is scoped to besides the account: the operation and its path parameters as validated
 * (UUIDs already lower-cased), never the raw URL, so every spelling the router accepts for one
 * operation (a trailing slash, an upper-case id) shares one key.
 */
export function operationScopePath(operationId: string, params: Record<string, unknown>): string {
  const canonical = Object.keys(params)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(String(params[name]))}`);
  return canonical.length > 0 ? `${operationId}?${canonical.join("&")}` : operationId;
}

/**
 * Wraps an operation in the Idempotency-Key protocol: the answer is serialised
 * once, stored with the work, and replayed byte for byte with `Idempotent-Replayed: true`.
 */
export async function idempotentOperation<Id extends OperationId>(
  deps: { runIdempotent: RunIdempotent },
  input: { operationId: Id; request: Request; body: unknown; params: object; db: Executor },
  scope: string,
  execute: (tx: Executor) => Promise<IdempotentWork<Id>>,
): Promise<OperationResult<Id>> {
  const key = idempotencyKeyOf(input, scope);
  const result = await deps.runIdempotent(input.db, key, input.body, async (tx) => serialise(await execute(tx)));
  return answerOf(result);
}

/** The key a request names, scoped (see operationScopePath). */
export function idempotencyKeyOf(
  input: { operationId: string; request: Request; params: object },
  scope: string,
): IdempotencyKey {
  const key = input.request.headers.get("idempotency-key") ?? "";
  const path = operationScopePath(input.operationId, input.params as Record<string, unknown>);
  return { scope, method: input.request.method, path, key };
}

/** A stored or fresh answer as the response, marked when it is a replay. */
export function answerOf<Id extends OperationId>(result: StoredAnswer & { replayed: boolean }): OperationResult<Id> {
  return {
    status: result.status,
    raw: result.body,
    contentType: "application/json; charset=utf-8",
    headers: result.replayed ? { "idempotent-replayed": "true" } : {},
  };
}

export const accountScope = (principal: Scope) => `account:${principal.accountId}:${principal.mode}`;
