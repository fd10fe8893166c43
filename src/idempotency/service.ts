import { createHash } from "node:crypto";
import { and, eq, lt, sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import { idempotencyRecords } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { AppError, errorEnvelope } from "../errors.ts";

export const retentionHours = 24;

export interface IdempotencyKey {
  /** `account:<id>:<mode>` or `admin`. */
  scope: string;
  method: string;
  path: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  body: string;
}

export interface IdempotentResult extends StoredResponse {
  replayed: boolean;
}

/** Canonical JSON (keys sorted at every level), so `{a,b}` and `{b,a}` are the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value as Record<string, unknown>).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprintOf(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

/** Errors that are part of the answer to this key (replayed as stored); 400s and 5xx leave the key free. */
const storesError = (error: AppError) => error.status !== 400 && error.status < 500;

/**
 * Runs `execute` at most once per key, in one database transaction with the record of its answer.
 * A concurrent request with the same key gets 409 at once (advisory lock); a later one gets the
 * stored answer byte for byte, or 422 if its body differs.
 */
export async function runIdempotent(
  db: Executor,
  id: IdempotencyKey,
  body: unknown,
  execute: (tx: Executor) => Promise<StoredResponse>,
): Promise<IdempotentResult> {
  const fingerprint = fingerprintOf(body);
  const lockName = `${id.scope}\n${id.method}\n${id.path}\n${id.key}`;
  return withTransaction(db, async (tx) => {
    const [lock] = await queryRows<{ locked: boolean }>(
      tx,
      sql`select pg_try_advisory_xact_lock(hashtextextended(${lockName}, 0)) as locked`,
    );
    if (!lock?.locked) {
      throw new AppError(
        "IDEMPOTENCY_IN_PROGRESS",
        "A request with this Idempotency-Key is still being processed; retry shortly",
        null,
        {
          "retry-after": "1",
        },
      );
    }
    const where = and(
      eq(idempotencyRecords.scope, id.scope),
      eq(idempotencyRecords.method, id.method),
      eq(idempotencyRecords.path, id.path),
      eq(idempotencyRecords.key, id.key),
    );
    const [existing] = await tx.select().from(idempotencyRecords).where(where);
    if (existing && existing.expiresAt.getTime() > Date.now()) {
      if (existing.fingerprint !== fingerprint) {
        throw new AppError(
          "IDEMPOTENCY_KEY_REUSED",
          "This Idempotency-Key was already used with a different request body; use a new key for a new order",
        );
      }
      return { status: existing.responseStatus, body: existing.responseBody, replayed: true };
    }
    if (existing) await tx.delete(idempotencyRecords).where(where);

    let response: StoredResponse;
    try {
      response = await withTransaction(tx, execute);
    } catch (error) {
      if (!(error instanceof AppError) || !storesError(error)) throw error;
      response = { status: error.status, body: JSON.stringify(errorEnvelope(error)) };
    }
    await tx.insert(idempotencyRecords).values({
      ...id,
      fingerprint,
      responseStatus: response.status,
      responseBody: response.body,
      expiresAt: new Date(Date.now() + retentionHours * 3600_000),
    });
    return { ...response, replayed: false };
  });
}

/** The clean-up job: drops records past their retention. Returns how many. */
export async function deleteExpiredIdempotencyRecords(db: Executor, now = new Date()): Promise<number> {
  const deleted = await db
    .delete(idempotencyRecords)
    .where(lt(idempotencyRecords.expiresAt, now))
    .returning({ id: idempotencyRecords.id });
  return deleted.length;
}
