import type { DbHandle, Unlisten } from "../db/client.ts";
import type { Queue, Task } from "../lib/job-queue.ts";
import type { Logger } from "../logger.ts";
import { type LoopContext, pumpQueue, repeatTasks, runJob } from "./pump.ts";
import { Wakeup } from "./wakeup.ts";

export interface RunnerDeps {
  /** Read at each log line, so a logger swapped on this object is used from then on. */
  logger: Logger;
  /** Where the LISTEN subscriptions come from (only `start` uses it). */
  database: Pick<DbHandle, "listen">;
}

export interface RunnerOptions {
  queues: Queue[];
  tasks?: Task[];
  /** Fallback poll of every queue when no NOTIFY arrives and no slot frees. */
  pollMs: number;
  /** Named in the runner's log lines. */
  workerId?: string;
}

export interface Runner {
  /**
   * One pass, as tests drive it: claims what is due on every queue (up to `limit` each, default
   * the queue's concurrency, per-key caps applied), runs it to completion, then runs every task
   * once; returns how many jobs and task items there were. Claim and task errors are thrown.
   */
  tick(options?: { limit?: number }): Promise<number>;
  /** Starts the background loops (once); `stop` ends them. */
  start(): void;
  /**
   * Graceful stop: no more claims, the jobs in flight finish, each queue gives back the leases it
   * still holds, the LISTEN subscriptions end. Resolves when all that is done.
   */
  stop(): Promise<void>;
}

/**
 * The one background-job runner: every queue (leased with FOR UPDATE SKIP LOCKED, woken by NOTIFY,
 * polled every `pollMs` as the fallback, with bounded concurrency that frees a slot as each job
 * ends) and every periodic task of a process runs through it.
 *
 * It holds ONE LISTEN subscription per channel, however many queues share it, through
 * `DbHandle.listen`; on PostgreSQL, postgres.js multiplexes all the channels of one client on ONE
 * dedicated listen connection (and LISTENs a channel once however often it is subscribed), so a
 * process costs one extra connection for all its wake-ups.
 */
export function createRunner(deps: RunnerDeps, options: RunnerOptions): Runner {
  const { queues, pollMs, workerId } = options;
  const tasks = options.tasks ?? [];
  const logger = () => deps.logger;
  let controller: AbortController | undefined;
  let running: Promise<void> | undefined;

  /** Subscribes each channel once; a notification nudges every queue on it. A failed LISTEN leaves the poll. */
  async function subscribe(wakeups: Map<Queue, Wakeup>): Promise<Unlisten[]> {
    const byChannel = new Map<string, Wakeup[]>();
    for (const [queue, wakeup] of wakeups) {
      if (queue.channel) byChannel.set(queue.channel, [...(byChannel.get(queue.channel) ?? []), wakeup]);
    }
    const subscriptions = await Promise.all(
      [...byChannel].map(async ([channel, listeners]) => {
        try {
          const nudge = () => {
            for (const wakeup of listeners) wakeup.nudge();
          };
          return [await deps.database.listen(channel, nudge)];
        } catch (error) {
          logger().error({ workerId, channel, err: error }, "could not LISTEN; polling only");
          return [];
        }
      }),
    );
    return subscriptions.flat();
  }

  async function run(signal: AbortSignal): Promise<void> {
    const context: LoopContext = { signal, pollMs, logger, workerId };
    const wakeups = new Map(queues.map((queue) => [queue, new Wakeup()]));
    const taskWakeup = new Wakeup();
    const wakeAll = () => {
      for (const wakeup of [...wakeups.values(), taskWakeup]) wakeup.nudge();
    };
    signal.addEventListener("abort", wakeAll, { once: true });
    const unlisten = await subscribe(wakeups);
    try {
      await Promise.all([
        ...[...wakeups].map(async ([queue, wakeup]) => {
          const session = queue.open({ wake: wakeup.nudge });
          try {
            await pumpQueue(queue, session, wakeup, context);
          } finally {
            await session.close({ release: true }).catch((error: unknown) => {
              logger().error({ workerId, queue: queue.name, err: error }, "queue could not be closed");
            });
          }
        }),
        repeatTasks(tasks, taskWakeup, context),
      ]);
    } finally {
      await Promise.all(unlisten.map((end) => end().catch(() => {})));
    }
  }

  return {
    async tick(tickOptions = {}) {
      const claimed = await Promise.all(
        queues.map(async (queue) => {
          const session = queue.open();
          try {
            const limit = tickOptions.limit ?? queue.concurrency;
            const jobs = await session.claim({ limit, perKeyLimit: queue.perKeyLimit, busy: new Map() });
            await Promise.all(jobs.map((job) => runJob(job, queue, { logger, workerId })));
            return jobs.length;
          } finally {
            await session.close({ release: false });
          }
        }),
      );
      let total = claimed.reduce((sum, n) => sum + n, 0);
      for (const task of tasks) total += await task.run();
      return total;
    },
    start() {
      if (running) return;
      controller = new AbortController();
      running = run(controller.signal);
    },
    async stop() {
      controller?.abort();
      await running;
    },
  };
}
