import { inArray } from "drizzle-orm";
import { newInstantToken } from "../db/clock.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { groupCommit } from "../lib/group-commit.ts";
import { currentTraceparent, type Tracing, tracingOff } from "../tracing/tracing.ts";
import { buildTransactionEvent } from "../webhooks/outbox.ts";
import { finalAnnouncement, groupAnnouncements } from "./announcements.ts";
import { completeBatchesOf } from "./batch-completion.ts";
import { type CompleteInput, type CompleteOrder, runCompleteStatement } from "./statements/complete.ts";
import {
  allowedFrom,
  attemptAnswerOf,
  type FinalOutcome,
  finalRow,
  holdsLease,
  type LeaseGuard,
  type TransitionResult,
} from "./states.ts";
import { presentTransaction, type TransactionRow } from "./view.ts";

/** One completion to make: the transaction, its outcome, the row as the caller read it, and the claim it needs. */
export interface CompletionRequest {
  id: string;
  outcome: FinalOutcome;
  known: TransactionRow;
  lease?: LeaseGuard;
  /** The traceparent of the job completing it, which the batch's span links to. */
  traceparent?: string;
}

/** How often a completion is tried again on a row that moved between its read and its statement. */
const maxRounds = 5;

/** The rows of `ids` as they stand now, by id. */
async function currentRows(db: Executor, ids: readonly string[]): Promise<Map<string, TransactionRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select()
    .from(transactions)
    .where(inArray(transactions.id, [...ids]));
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * What the statement takes for `items`: each final row as the completion leaves it, its event and its final
 * announcement rendered with `token` standing for the completion time the statement stamps.
 */
function toInput(items: readonly { request: CompletionRequest; next: TransactionRow }[], token: string): CompleteInput {
  const events = items.map(({ next }) => {
    const view = { ...presentTransaction(next), completed_at: token };
    return buildTransactionEvent(view, token);
  });
  const announcements = items.map(({ next }, n) =>
    finalAnnouncement(next.reference, events[n]?.payload.data ?? presentTransaction(next)),
  );
  const chunks = groupAnnouncements(announcements);
  const orders = items.map(({ request, next }, n): CompleteOrder => {
    const event = events[n] as (typeof events)[number];
    const answer = attemptAnswerOf(request.outcome);
    return {
      ord: n + 1,
      id: request.id,
      from_status: request.known.status,
      from_updated_at: request.known.updatedAt.toISOString(),
      lease_owner: request.lease?.leaseOwner ?? null,
      attempts: request.lease?.attempts ?? null,
      status: request.outcome.status,
      metadata: next.metadata,
      provider_reference: next.providerReference,
      failure_reason: next.failureReason,
      note: request.outcome.ledgerNote ?? null,
      event_id: event.id,
      event_type: event.type,
      payload: event.payload,
      announcement: announcements[n] as string,
      chunk: chunks[n] as number,
      answer_status: answer.status,
      answer_message: answer.message ?? null,
      answer_ms: answer.answerMs ?? null,
      answer_provider: answer.provider ?? null,
    };
  });
  return { orders, token };
}

type Settled = PromiseSettledResult<TransitionResult>;
const fulfilled = (value: TransitionResult): Settled => ({ status: "fulfilled", value });
const rejected = (reason: unknown): Settled => ({ status: "rejected", reason });

/**
 * The one completion path, for one order or many (a single completion is a batch of one): each request is
 * answered as if it had run alone. A request whose transition is not allowed from the row it read, or whose
 * lease is not the transaction's, changes nothing. The others go in ONE statement (`runCompleteStatement`);
 * one whose row moved since it was read (a callback completed it, a lease was taken over) is read again and
 * tried again with the rest of its round, up to five times. Several on one wallet settle it once by their
 * sum, each with its own ledger entry and running balances (in request order). The same transaction twice:
 * the later request runs in the next round and finds it final. Once committed, the bulk orders the
 * completions finished are completed (`completeBatchesOf`). Answers in request order, each settled on its own.
 */
async function settleCompletions(db: Executor, requests: readonly CompletionRequest[]): Promise<Settled[]> {
  const results: (Settled | undefined)[] = requests.map(() => undefined);
  let open = requests.map((request, index) => ({ request, index }));
  for (let round = 0; round < maxRounds && open.length > 0; round++) {
    const batch: { request: CompletionRequest; index: number; next: TransactionRow }[] = [];
    const later: typeof open = [];
    const seen = new Set<string>();
    for (const { request, index } of open) {
      const { known, outcome, lease } = request;
      if (!allowedFrom[outcome.status].includes(known.status) || !holdsLease(known, lease)) {
        results[index] = fulfilled({ row: known, changed: false });
      } else if (seen.has(request.id)) {
        later.push({ request, index });
      } else {
        seen.add(request.id);
        // The completion time is the statement's (the database clock); the row's is set from its answer.
        batch.push({ request, index, next: finalRow(known, outcome, known.updatedAt) });
      }
    }
    if (batch.length === 0) break;
    const answer = await runCompleteStatement(db, toInput(batch, newInstantToken()));
    const changed = new Set((answer.changed ?? "").split(",").filter(Boolean).map(Number));
    const completedAt = new Date(answer.completed_at);
    const moved: typeof batch = [];
    for (const [position, item] of batch.entries()) {
      if (changed.has(position + 1))
        results[item.index] = fulfilled({ row: { ...item.next, completedAt, updatedAt: completedAt }, changed: true });
      else moved.push(item);
    }
    const finished = batch.filter((_, position) => changed.has(position + 1)).map(({ next }) => next.batchId);
    await completeBatchesAfter(db, finished);
    const again = [...moved, ...later];
    const current = await currentRows(
      db,
      again.map(({ request }) => request.id),
    );
    open = [];
    for (const { request, index } of again) {
      const row = current.get(request.id);
      if (row) open.push({ request: { ...request, known: row }, index });
      else results[index] = rejected(new Error(`transaction ${request.id} not found`));
    }
  }
  return results.map(
    (result, index) => result ?? rejected(new Error(`transaction ${requests[index]?.id} kept changing while being completed`)),
  );
}

/**
 * After a completion has committed: completes the batches of the orders it finished when they were their
 * last open ones (see `completeBatchesOf`). The completion stands whatever happens here; a batch left open
 * by a failure is completed by the sweep (`completeFinishedBatches`).
 */
async function completeBatchesAfter(db: Executor, batchIds: Iterable<string | null>): Promise<void> {
  try {
    await completeBatchesOf(db, batchIds);
  } catch {}
}

/** Completes many transactions in ONE statement, each exactly as it would alone (see `settleCompletions`). */
export async function completeTransactions(db: Executor, requests: readonly CompletionRequest[]): Promise<TransitionResult[]> {
  return (await settleCompletions(db, requests)).map((result) => {
    if (result.status === "rejected") throw result.reason;
    return result.value;
  });
}

/**
 * Moves a transaction to `successful` or `failed` from a state that may lead there (a batch of one, see
 * `settleCompletions`): the guarded state change, the hold captured or released with its ledger entry, the
 * event with a delivery per webhook endpoint, and the NOTIFYs, delivered on commit. Repeating it, or
 * completing a final transaction, changes nothing; with a `lease`, neither does completing a transaction
 * whose lease another worker has taken.
 */
export async function completeTransaction(
  db: Executor,
  id: string,
  outcome: FinalOutcome,
  known?: TransactionRow,
  lease?: LeaseGuard,
): Promise<TransitionResult> {
  const row = known ?? (await currentRows(db, [id])).get(id);
  if (!row) throw new Error(`transaction ${id} not found`);
  const [result] = await completeTransactions(db, [{ id, outcome, known: row, lease }]);
  if (!result) throw new Error(`transaction ${id} was not completed`);
  return result;
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
      for (const request of requests) {
        const [alone] = await settleCompletions(db, [request]).catch((reason: unknown) => [rejected(reason)]);
        results.push(alone ?? rejected(new Error(`transaction ${request.id} was not completed`)));
      }
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
