import { sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { settleEach } from "../ledger/movements.ts";
import { buildTransactionEvent, emitEach } from "../ledger/outbox.ts";
import { groupCommit } from "../lib/group-commit.ts";
import { currentTraceparent, type Tracing, tracingOff } from "../tracing/tracing.ts";
import {
  allowedFrom,
  attemptAnswerOf,
  completeBatchesAfter,
  completeTransaction,
  type FinalOutcome,
  finalAnnouncement,
  finalChannel,
  finalRow,
  groupAnnouncements,
  holdsLease,
  type LeaseGuard,
  type TransitionResult,
} from "./states.ts";
import { presentTransaction, type TransactionRow } from "./view.ts";

/** One completion to make: what `completeTransaction` takes, the row as the caller read it. */
export interface CompletionRequest {
  id: string;
  outcome: FinalOutcome;
  known: TransactionRow;
  lease?: LeaseGuard;
  /** The traceparent of the job completing it, which the batch's span links to. */
  traceparent?: string;
}

/** What goes in: one array per column, one element per transaction (the SQL text never changes). */
interface Columns {
  id: string[];
  fromStatus: string[];
  fromUpdatedAt: string[];
  leaseOwner: (string | null)[];
  attempts: (number | null)[];
  status: string[];
  metadata: string[];
  providerReference: (string | null)[];
  failureReason: (string | null)[];
  eventId: string[];
  eventType: string[];
  payload: string[];
  eventCreatedAt: string[];
  announcement: string[];
  chunk: number[];
  answerStatus: string[];
  answerMessage: (string | null)[];
  answerMs: (number | null)[];
  answerProvider: (string | null)[];
}

const param = (values: unknown[]) => sql.param(values);

/**
 * The one statement that completes a batch: per transaction the guarded status change (its status and
 * `updated_at` as read, and its lease), the capture or release with its ledger entry, the event with
 * its deliveries and the attempt's answer; ONE NOTIFY waking webhook delivery and the final
 * announcements grouped into as few NOTIFYs as fit. Transaction rows are locked in id order, then the
 * wallets in id order (see `settleEach`), so concurrent batches never deadlock. Returns the positions
 * (1-based) of the transactions it changed.
 */
async function completeBatch(db: Executor, columns: Columns, at: string): Promise<Set<number>> {
  const c = columns;
  const settle = settleEach("txn");
  const emitted = emitEach("txn");
  const [result] = await queryRows<{ changed: string | null }>(
    db,
    sql`with input as materialized (
          select * from unnest(${param(c.id)}::uuid[], ${param(c.fromStatus)}::text[], ${param(c.fromUpdatedAt)}::text[],
                               ${param(c.leaseOwner)}::text[], ${param(c.attempts)}::int[], ${param(c.status)}::text[],
                               ${param(c.metadata)}::text[], ${param(c.providerReference)}::text[], ${param(c.failureReason)}::text[],
                               ${param(c.eventId)}::text[], ${param(c.eventType)}::text[], ${param(c.payload)}::text[],
                               ${param(c.eventCreatedAt)}::text[], ${param(c.announcement)}::text[], ${param(c.chunk)}::int[],
                               ${param(c.answerStatus)}::text[], ${param(c.answerMessage)}::text[], ${param(c.answerMs)}::int[],
                               ${param(c.answerProvider)}::text[])
            with ordinality as i(id, from_status, from_updated_at, lease_owner, attempts, status, metadata, provider_reference,
                                 failure_reason, event_id, event_type, payload, event_created_at, announcement, chunk,
                                 answer_status, answer_message, answer_ms, answer_provider, ord)
        ), guarded as materialized (
          -- One primary-key lookup (and lock) per transaction, in id order, whatever the planner guesses of the
          -- sizes (a prepared statement's plan outlives the statistics it was made with).
          select t.id, i.ord from (select * from input order by id) i
          cross join lateral (select * from transactions t where t.id = i.id limit 1 for update) t
          where t.status = i.from_status and t.updated_at = i.from_updated_at::timestamptz
            and (i.lease_owner is null or (t.lease_owner = i.lease_owner and t.attempts = i.attempts))
        ), txn as (
          update transactions t
          set status = i.status, completed_at = ${at}::timestamptz, updated_at = ${at}::timestamptz, metadata = i.metadata::jsonb,
              provider_reference = i.provider_reference, failure_reason = i.failure_reason,
              lease_owner = null, lease_expires_at = null, next_attempt_at = null
          from guarded g join input i on i.ord = g.ord
          where t.id = g.id
          returning t.id, t.account_id, t.mode, t.price_kobo, t.status, t.provider, t.provider_reference, i.ord,
                    i.event_id, i.event_type, i.payload::jsonb as payload, i.event_created_at::timestamptz as event_created_at,
                    i.announcement, i.chunk, i.answer_status, i.answer_message, i.answer_ms, i.answer_provider
        ), ${settle.wallet}, ${settle.entry}, ${emitted.parts},
        answered as (
          update provider_attempts a
          set status = txn.answer_status, message = coalesce(txn.answer_message, a.message),
              provider_reference = coalesce(txn.provider_reference, a.provider_reference),
              answered_at = now(), answer_ms = coalesce(a.answer_ms, txn.answer_ms)
          from txn
          where a.transaction_id = txn.id and a.provider = coalesce(txn.answer_provider, txn.provider)
        )
        select (select string_agg(ord::text, ',') from txn) as changed,
               ${emitted.notify} as webhooks_due,
               (select count(*) from (select pg_notify(${finalChannel}, '[' || string_agg(announcement, ',' order by ord) || ']')
                                      from txn group by chunk) n) as final_announced`,
  );
  return new Set((result?.changed ?? "").split(",").filter(Boolean).map(Number));
}

/**
 * Completes many transactions in ONE statement, each exactly as `completeTransaction` would alone:
 * a request whose transition is not allowed, or whose lease is not the transaction's, changes nothing;
 * one whose row moved since it was read (a callback completed it, a lease was taken over) is re-read
 * and retried alone, as `completeTransaction` does. Several on one wallet settle it once by their sum,
 * each with its own ledger entry and running balances (in request order). Answers in request order.
 */
export async function completeTransactions(db: Executor, requests: readonly CompletionRequest[]): Promise<TransitionResult[]> {
  return (await settleCompletions(db, requests)).map((result) => {
    if (result.status === "rejected") throw result.reason;
    return result.value;
  });
}

type Settled = PromiseSettledResult<TransitionResult>;

const settled = (promise: Promise<TransitionResult>): Promise<Settled> =>
  promise.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );

/** `completeTransactions`, each answer settled on its own: a retry that fails alone fails only its request. */
async function settleCompletions(db: Executor, requests: readonly CompletionRequest[]): Promise<Settled[]> {
  const results: (Settled | undefined)[] = requests.map(({ known, outcome, lease }) =>
    allowedFrom[outcome.status].includes(known.status) && holdsLease(known, lease)
      ? undefined
      : { status: "fulfilled", value: { row: known, changed: false } },
  );
  const completedAt = new Date();
  const at = completedAt.toISOString();
  const batch: { index: number; next: TransactionRow }[] = [];
  const seen = new Set<string>();
  requests.forEach((request, index) => {
    // The same transaction twice: the later one runs after, alone, and finds it final.
    if (results[index] || seen.has(request.id)) return;
    seen.add(request.id);
    batch.push({ index, next: finalRow(request.known, request.outcome, completedAt) });
  });
  if (batch.length > 0) {
    const columns = toColumns(batch.map(({ index, next }) => ({ request: requests[index] as CompletionRequest, next })));
    const changed = await completeBatch(db, columns, at);
    batch.forEach(({ index, next }, position) => {
      if (changed.has(position + 1)) results[index] = { status: "fulfilled", value: { row: next, changed: true } };
    });
    const batchIds = batch.filter((_, position) => changed.has(position + 1)).map(({ next }) => next.batchId);
    await completeBatchesAfter(db, batchIds);
  }
  for (const [index, request] of requests.entries()) {
    if (results[index]) continue;
    results[index] = await settled(completeTransaction(db, request.id, request.outcome, undefined, request.lease));
  }
  return results as Settled[];
}

const asError = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

/**
 * The worker's completions, group-committed (see `groupCommit`, all under one key): those of
 * concurrent jobs that arrive while one batch statement is in flight go together in the next. If a
 * batch statement fails (a missing hold breaks `held_kobo >= 0` for all of it), nothing of it
 * happened, and each of its requests is completed alone, so only the faulty one fails.
 */
export function completionBatcher(
  db: Executor,
  tracing: Tracing = tracingOff,
  maxBatch = 256,
): (request: CompletionRequest) => Promise<TransitionResult> {
  const complete = groupCommit<CompletionRequest, TransitionResult>(async (_key, requests) => {
    const span = batchSpan(tracing, requests);
    let results: Settled[];
    try {
      results = await settleCompletions(db, requests);
    } catch {
      results = [];
      for (const { id, outcome, known, lease } of requests)
        results.push(await settled(completeTransaction(db, id, outcome, known, lease)));
    } finally {
      span.end();
    }
    return results.map((result) => (result.status === "fulfilled" ? result.value : asError(result.reason)));
  }, maxBatch);
  return (request) => complete("completions", { ...request, traceparent: request.traceparent ?? currentTraceparent() });
}

/** A batch of one belongs to its job's trace; a larger batch starts its own and links to each job. */
function batchSpan(tracing: Tracing, requests: readonly CompletionRequest[]) {
  if (!tracing.enabled) return tracing.startSpan("complete transactions");
  const members = requests.flatMap((request) => (request.traceparent ? [request.traceparent] : []));
  return tracing.startSpan("complete transactions", {
    parent: requests.length === 1 ? (members[0] ?? null) : null,
    links: requests.length === 1 ? [] : members,
    attributes: { "vend.batch.size": requests.length },
  });
}

function toColumns(items: { request: CompletionRequest; next: TransactionRow }[]): Columns {
  const events = items.map(({ next }) => buildTransactionEvent(presentTransaction(next)));
  const announcements = items.map(({ next }, n) =>
    finalAnnouncement(next.reference, events[n]?.payload.data ?? presentTransaction(next)),
  );
  const answers = items.map(({ request }) => attemptAnswerOf(request.outcome));
  return {
    id: items.map(({ request }) => request.id),
    fromStatus: items.map(({ request }) => request.known.status),
    fromUpdatedAt: items.map(({ request }) => request.known.updatedAt.toISOString()),
    leaseOwner: items.map(({ request }) => request.lease?.leaseOwner ?? null),
    attempts: items.map(({ request }) => request.lease?.attempts ?? null),
    status: items.map(({ next }) => next.status),
    metadata: items.map(({ next }) => JSON.stringify(next.metadata)),
    providerReference: items.map(({ next }) => next.providerReference),
    failureReason: items.map(({ next }) => next.failureReason),
    eventId: events.map((event) => event.id),
    eventType: events.map((event) => event.type),
    payload: events.map((event) => JSON.stringify(event.payload)),
    eventCreatedAt: events.map((event) => event.createdAt),
    announcement: announcements,
    chunk: groupAnnouncements(announcements),
    answerStatus: answers.map((answer) => answer.status),
    answerMessage: answers.map((answer) => answer.message ?? null),
    answerMs: answers.map((answer) => answer.answerMs ?? null),
    answerProvider: answers.map((answer) => answer.provider ?? null),
  };
}
