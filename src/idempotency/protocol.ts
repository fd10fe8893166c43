import { createHash } from "node:crypto";
import { lt, sql } from "drizzle-orm";
import { cte } from "../db/cte.ts";
import { queryRows } from "../db/rows.ts";
import { idempotencyRecords } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { AppError, errorEnvelope } from "../errors.ts";
import { claimedKeys, claimKeys } from "./claim-keys.ts";
import { storeAnswers } from "./store-answers.ts";

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

/** What the claim of a key found: whether its advisory lock was taken, and any stored answer. */
export interface PriorAnswer {
  locked: boolean;
  status: number | null;
  body: string | null;
  fingerprint: string | null;
  expired: boolean | null;
}

/** The advisory lock of a key: held by the request running it, until its transaction ends. */
export const lockNameOf = (id: IdempotencyKey) => `${id.scope}\n${id.method}\n${id.path}\n${id.key}`;

/** 409: another request with this key is running now. */
export const keyInFlight = () =>
  new AppError("IDEMPOTENCY_IN_PROGRESS", "A request with this Idempotency-Key is still being processed; retry shortly", null, {
    "retry-after": "1",
  });

/**
 * What a claim's finding means. A request that could not take the lock is a concurrent duplicate:
 * 409. A stored, unexpired answer is replayed (or 422 if the body differs). Null: the key is free to
 * run (an expired answer is then replaced).
 */
export function storedAnswerOf(prior: PriorAnswer, fingerprint: string): IdempotentResult | null {
  if (!prior.locked) throw keyInFlight();
  if (prior.status === null || prior.body === null || prior.expired) return null;
  if (prior.fingerprint !== fingerprint) {
    throw new AppError(
      "IDEMPOTENCY_KEY_REUSED",
      "This Idempotency-Key was already used with a different request body; use a new key for a new order",
    );
  }
  return { status: Number(prior.status), body: prior.body, replayed: true };
}

const oneKey = cte("one_key", ["ord", "lock", "scope", "method", "path", "key"]);

/** What the claim of a free key found: the expired record its answer replaces (a `ctid`), if any. */
interface FreeKey {
  expiredRecord: string | null;
}

/**
 * Takes the key's advisory lock and reads any stored answer in one round trip (`claimKeys`, the claim the
 * vend accept makes too; see storedAnswerOf): the answer to replay, or the key free to run.
 */
async function claim(tx: Executor, id: IdempotencyKey, fingerprint: string): Promise<IdempotentResult | FreeKey> {
  const [row] = await queryRows<PriorAnswer & { record: string | null }>(
    tx,
    sql`with ${oneKey.name} as (
          select 0 as ord, ${lockNameOf(id)}::text as lock, ${id.scope}::text as scope, ${id.method}::text as method,
                 ${id.path}::text as path, ${id.key}::text as key
        ), ${claimKeys(oneKey)}
        select locked, status, body, fingerprint, expired, record::text as record from ${claimedKeys.name}`,
  );
  const stored = storedAnswerOf(
    row ?? { locked: false, status: null, body: null, fingerprint: null, expired: null },
    fingerprint,
  );
  return stored ?? { expiredRecord: row?.expired ? row.record : null };
}

const oneAnswer = cte("one_answer", ["scope", "method", "path", "key", "fingerprint", "status", "body"]);
const expiredRecord = cte("expired", ["record"]);

/** Stores the answer to a key the claim found free, replacing its expired record (`storeAnswers`). */
async function store(tx: Executor, id: IdempotencyKey, fingerprint: string, free: FreeKey, response: StoredResponse) {
  await queryRows(
    tx,
    sql`with ${oneAnswer.name} as (
          select ${id.scope}::text as scope, ${id.method}::text as method, ${id.path}::text as path, ${id.key}::text as key,
                 ${fingerprint}::text as fingerprint, ${response.status}::integer as status, ${response.body}::text as body
        ), ${expiredRecord.name} as (
          select ${free.expiredRecord}::tid as record
        ), ${storeAnswers(oneAnswer, expiredRecord)}
        select 1`,
  );
}

/**
 * Runs `execute` at most once per key, in one database transaction with the record of its
 * answer. A concurrent request with the same key gets 409 at once; a later one gets the
 * stored answer byte for byte, or 422 if its body differs. An error that is part of the
 * answer (a 402, say) rolls the work back and is then stored on its own, so the next retry
 * with this key gets the same error; 400s and 5xx leave the key free.
 */
export async function runIdempotent(
  db: Executor,
  id: IdempotencyKey,
  body: unknown,
  execute: (tx: Executor) => Promise<StoredResponse>,
): Promise<IdempotentResult> {
  const fingerprint = fingerprintOf(body);
  try {
    return await onceMoreIfRaced(() =>
      withTransaction(db, async (tx) => {
        const claimed = await claim(tx, id, fingerprint);
        if ("replayed" in claimed) return claimed;
        const response = await execute(tx);
        await store(tx, id, fingerprint, claimed, response);
        return { ...response, replayed: false };
      }),
    );
  } catch (error) {
    if (!(error instanceof AppError) || !storesError(error) || error.code.startsWith("IDEMPOTENCY_")) throw error;
    const response = { status: error.status, body: JSON.stringify(errorEnvelope(error)) };
    return onceMoreIfRaced(() =>
      withTransaction(db, async (tx) => {
        const claimed = await claim(tx, id, fingerprint);
        if ("replayed" in claimed) return claimed;
        await store(tx, id, fingerprint, claimed, response);
        return { ...response, replayed: false };
      }),
    );
  }
}

/** True for the unique violation of an idempotency record (PostgreSQL and PGlite name the constraint differently). */
export function isRecordCollision(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, constraint_name, constraint, cause } = current as Record<string, unknown>;
    if (code === "23505" && (constraint_name ?? constraint) === "idempotency_scope_idx") return true;
    current = cause;
  }
  return false;
}

/**
 * The claim reads the record in the statement that takes the advisory lock, so it sees the database as
 * of that statement's start. A first request that commits between that moment and the lock leaves no
 * record in view but a free lock: the work runs, its record collides with the committed one, and
 * everything rolls back. Running once more then sees the record and replays it.
 */
async function onceMoreIfRaced<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isRecordCollision(error)) throw error;
    return run();
  }
}

/** The clean-up job: drops records past their retention. Returns how many. */
export async function deleteExpiredIdempotencyRecords(db: Executor, now?: Date): Promise<number> {
  const deleted = await db
    .delete(idempotencyRecords)
    .where(lt(idempotencyRecords.expiresAt, now ?? sql`now()`))
    .returning({ key: idempotencyRecords.key });
  return deleted.length;
}
