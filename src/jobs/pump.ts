import { isDatabaseUnavailable } from "../db/unavailable.ts";
import type { Job, Queue, QueueSession, Task } from "../lib/job-queue.ts";
import type { Logger } from "../logger.ts";
import type { Wakeup } from "./wakeup.ts";

export interface LoopContext {
  signal: AbortSignal;
  pollMs: number;
  /** Read at each use: a test may swap the logger while a loop runs. */
  logger(): Logger;
  workerId?: string;
}

/** Runs one job; a throw (the job handles its own failures, so a bug) is logged, never rethrown. */
export function runJob(job: Job, queue: Queue, context: Pick<LoopContext, "logger" | "workerId">): Promise<void> {
  return job.run().catch((error: unknown) => {
    context.logger().error({ workerId: context.workerId, queue: queue.name, err: error }, "job failed");
  });
}

/**
 * One queue's loop: keeps up to `concurrency` jobs in flight (at most `perKeyLimit` per key),
 * claiming when `minFreeToClaim` slots are free and again as each job ends while work may be waiting
 * for a slot, so a slow job never holds up the others. Claims again at once after a full claim with
 * room left; otherwise waits for a freed slot, a nudge (NOTIFY), the next job's due time when the
 * queue knows it, or the poll. On abort it stops claiming and resolves once the jobs
 * in flight have ended.
 */
export async function pumpQueue(queue: Queue, session: QueueSession, wakeup: Wakeup, context: LoopContext): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const busy = new Map<string, number>();
  const free = () => queue.concurrency - inFlight.size;
  const claimSize = adaptiveClaimSize(queue);
  // Work may be waiting for a free slot: the last claim was full, or found no room, or left jobs behind for
  // their key's cap. Only then does a job's end call for another claim.
  let waitingForSlot = false;
  const track = (job: Job) => {
    const key = job.key;
    if (key !== undefined) busy.set(key, (busy.get(key) ?? 0) + 1);
    const running: Promise<void> = runJob(job, queue, context).finally(() => {
      if (key !== undefined) {
        const left = (busy.get(key) ?? 1) - 1;
        if (left > 0) busy.set(key, left);
        else busy.delete(key);
      }
      inFlight.delete(running);
      if (waitingForSlot) wakeup.nudge();
    });
    inFlight.add(running);
  };

  const failures = claimFailures(queue, context);
  while (!context.signal.aborted) {
    wakeup.clear();
    let claimed: Job[] = [];
    let full = false;
    if (free() >= claimSize.minFree()) {
      const limit = claimSize.limit(free());
      try {
        claimed = await session.claim({ limit, perKeyLimit: queue.perKeyLimit, busy });
        failures.succeeded();
        claimSize.claimed(claimed.length, limit);
        full = claimed.length >= limit;
      } catch (error) {
        failures.failed(error);
      }
      waitingForSlot = full || queue.perKeyLimit !== undefined;
    } else waitingForSlot = true;
    for (const job of claimed) track(job);
    // A claim that took less than it could found all that was due: the next waits for news.
    if (full && free() >= claimSize.minFree()) continue;
    const due = session.nextDueMs?.();
    // A job due already but not claimed is another worker's for the moment (skipped while locked): look again shortly.
    if (!context.signal.aborted)
      await wakeup.wait(Math.min(context.pollMs, due === undefined ? context.pollMs : Math.max(due, 50)));
  }
  await Promise.all(inFlight);
}

/**
 * Logs a queue's failed claims: each one, except that while the database does not answer (a queue may look
 * again every few hundred ms then) only the first of the run is logged, and the claim that succeeds after
 * it says how many failed.
 */
function claimFailures(queue: Queue, context: LoopContext) {
  let unavailable = 0;
  let since = 0;
  return {
    failed(error: unknown) {
      const fields = { workerId: context.workerId, queue: queue.name, err: error };
      if (!isDatabaseUnavailable(error)) context.logger().error(fields, "job claim failed");
      else if (unavailable++ === 0) {
        since = performance.now();
        context.logger().error(fields, "job claim failed: the database does not answer; trying again until it does");
      }
    },
    succeeded() {
      if (unavailable === 0) return;
      const ms = Math.round(performance.now() - since);
      context.logger().warn({ workerId: context.workerId, queue: queue.name, failed: unavailable, ms }, "job claims resumed");
      unavailable = 0;
    },
  };
}

/**
 * How many free slots a claim waits for and how many it takes: fixed (`minFreeToClaim`, taking every
 * free slot), or adaptive (`claimSize`: taking up to the current size, made once that many slots are
 * free, or half the concurrency, so the next claim goes out while the last batch's jobs still run).
 */
function adaptiveClaimSize(queue: Queue) {
  const adaptive = queue.claimSize;
  if (!adaptive) {
    const minFree = Math.max(1, queue.minFreeToClaim ?? 1);
    return { minFree: () => minFree, limit: (free: number) => free, claimed: () => {} };
  }
  const min = Math.max(1, Math.min(adaptive.min, queue.concurrency));
  const max = Math.max(min, Math.min(adaptive.max, queue.concurrency));
  const waitCap = Math.max(1, Math.floor(queue.concurrency / 2));
  let size = min;
  return {
    minFree: () => Math.min(size, waitCap),
    limit: (free: number) => Math.min(free, size),
    claimed(count: number, limit: number) {
      if (count >= limit) size = Math.min(size * 2, max);
      else if (count * 2 < limit) size = Math.max(Math.ceil(size / 2), min);
    },
  };
}

/**
 * Every periodic task of a process on ONE timer: each runs at start, then every `everyMs` from the start of
 * its last run, until abort. The timer sleeps until the soonest task is due; a task still running when it
 * is due again starts once it has ended (a slow task never holds up the others, nor runs twice at once).
 */
export async function repeatTasks(tasks: readonly Task[], wakeup: Wakeup, context: LoopContext): Promise<void> {
  const dueAt = tasks.map(() => 0);
  const running = new Map<Task, Promise<void>>();
  while (!context.signal.aborted) {
    wakeup.clear();
    const now = Date.now();
    tasks.forEach((task, n) => {
      if (running.has(task) || (dueAt[n] ?? 0) > now) return;
      dueAt[n] = now + task.everyMs;
      // Started in a promise of its own: a task that throws before its first await is logged like any other.
      const run = Promise.resolve()
        .then(() => task.run())
        .then(
          () => {},
          (error: unknown) => {
            context.logger().error({ workerId: context.workerId, task: task.name, err: error }, "background task failed");
          },
        )
        .finally(() => {
          running.delete(task);
          wakeup.nudge();
        });
      running.set(task, run);
    });
    const waiting = tasks.flatMap((task, n) => (running.has(task) ? [] : [dueAt[n] ?? 0]));
    if (!context.signal.aborted) await wakeup.wait(waiting.length > 0 ? Math.min(...waiting) - Date.now() : 3_600_000);
  }
  await Promise.all(running.values());
}
