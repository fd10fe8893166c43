import { describe, expect, test } from "bun:test";
import { createRunner, type RunnerDeps } from "../../src/jobs/runner.ts";
import type { ClaimRequest, Job, Queue } from "../../src/lib/job-queue.ts";
import { createLogger } from "../../src/logger.ts";
import { waitUntil } from "../helpers/wait.ts";

/** A job that ends when `finish` is called. */
function heldJob(key?: string) {
  let finish = () => {};
  const ended = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const job: Job = { key, run: () => ended };
  return { job, finish: () => finish() };
}

/** An in-memory queue: `claim` hands out what `backlog` holds, honouring the limit and the per-key cap. */
function memoryQueue(options: Partial<Queue> & { backlog: ReturnType<typeof heldJob>[] }) {
  const requests: ClaimRequest[] = [];
  const closed: boolean[] = [];
  const queue: Queue = {
    name: "memory",
    concurrency: 4,
    ...options,
    open: () => ({
      async claim(request) {
        requests.push({ ...request, busy: new Map(request.busy) });
        const taken: Job[] = [];
        const counts = new Map(request.busy);
        for (const entry of [...options.backlog]) {
          if (taken.length >= request.limit) break;
          const key = entry.job.key;
          if (key !== undefined && request.perKeyLimit !== undefined && (counts.get(key) ?? 0) >= request.perKeyLimit) continue;
          if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
          options.backlog.splice(options.backlog.indexOf(entry), 1);
          taken.push(entry.job);
        }
        return taken;
      },
      async close({ release }) {
        closed.push(release);
      },
    }),
  };
  return { queue, requests, closed };
}

const deps = (listen: RunnerDeps["database"]["listen"] = async () => async () => {}) => ({
  logger: createLogger("silent"),
  database: { listen },
});
/**
 * A moment for the loop to take its turns. A fixed one on purpose: these tests assert what happened and
 * also that nothing more did (no extra claim, not stopped yet), which only a window of time can show.
 */
const settle = () => Bun.sleep(20);

describe("the job runner", () => {
  test("a tick claims up to the limit, runs the jobs to their end, then runs each task once", async () => {
    const backlog = [heldJob(), heldJob(), heldJob()];
    const { queue, closed } = memoryQueue({ backlog });
    for (const entry of backlog) entry.finish();
    let taskRuns = 0;
    const runner = createRunner(deps(), {
      queues: [queue],
      tasks: [{ name: "task", everyMs: 60_000, run: async () => ++taskRuns }],
      pollMs: 60_000,
    });
    expect(await runner.tick({ limit: 2 })).toBe(3);
    expect(backlog).toHaveLength(1);
    expect(closed).toEqual([false]);
  });

  test("claims wait for enough free slots, keep the per-key cap, and a finished job frees its slot", async () => {
    const jobs = [heldJob("a"), heldJob("a"), heldJob("a"), heldJob("b")];
    const backlog = [...jobs];
    const { queue, requests } = memoryQueue({ backlog, concurrency: 4, minFreeToClaim: 2, perKeyLimit: 2 });
    const runner = createRunner(deps(), { queues: [queue], pollMs: 60_000 });
    runner.start();
    await settle();
    // Two "a" and the "b" taken; the third "a" waits for its key, and one free slot is below the batch threshold.
    expect(requests).toEqual([{ limit: 4, perKeyLimit: 2, busy: new Map() }]);
    expect(backlog).toHaveLength(1);
    expect(backlog[0]).toBe(jobs[2]);
    jobs[3]?.finish();
    await settle();
    expect(requests.at(-1)).toEqual({ limit: 2, perKeyLimit: 2, busy: new Map([["a", 2]]) });
    expect(backlog[0]).toBe(jobs[2]);
    jobs[0]?.finish();
    await settle();
    expect(requests).toContainEqual({ limit: 3, perKeyLimit: 2, busy: new Map([["a", 1]]) });
    expect(backlog).toEqual([]);
    for (const entry of jobs) entry.finish();
    await runner.stop();
  });

  test("an adaptive claim size doubles while claims come back full and halves when they come back short", async () => {
    const backlog = Array.from({ length: 200 }, () => heldJob());
    for (const entry of backlog) entry.finish();
    const handlers: (() => void)[] = [];
    const listen = async (_channel: string, onPayload: (payload: string) => void) => {
      handlers.push(() => onPayload(""));
      return async () => {};
    };
    const { queue, requests } = memoryQueue({ backlog, channel: "work", concurrency: 16, claimSize: { min: 1, max: 16 } });
    const runner = createRunner(deps(listen), { queues: [queue], pollMs: 60_000 });
    runner.start();
    await waitUntil(() => backlog.length === 0, { what: "the backlog of 200 claimed" });
    const limits = requests.map((r) => r.limit);
    // From one row, growing while the backlog fills every claim, to the largest size.
    expect(limits.slice(0, 4)).toEqual([1, 2, 4, 8]);
    expect(Math.max(...limits)).toBe(16);
    expect(limits.every((limit) => limit <= 16)).toBe(true);
    // The backlog is gone: each empty claim halves the size, down to one row.
    for (let n = 0; n < 6; n++) {
      for (const handler of handlers) handler();
      await settle();
    }
    expect(requests.slice(-2).map((r) => r.limit)).toEqual([1, 1]);
    await runner.stop();
  });

  test("stop lets in-flight jobs finish, then closes the queue with its leases given back", async () => {
    const entry = heldJob();
    const { queue, closed } = memoryQueue({ backlog: [entry] });
    const runner = createRunner(deps(), { queues: [queue], pollMs: 60_000 });
    runner.start();
    await settle();
    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    entry.finish();
    await stopping;
    expect(closed).toEqual([true]);
  });

  test("one LISTEN per channel, however many queues share it; a notification nudges each of them", async () => {
    const listened: string[] = [];
    const handlers: (() => void)[] = [];
    const listen = async (channel: string, onPayload: (payload: string) => void) => {
      listened.push(channel);
      handlers.push(() => onPayload(""));
      return async () => {};
    };
    const first = memoryQueue({ backlog: [], channel: "work" });
    const second = memoryQueue({ backlog: [], channel: "work" });
    const runner = createRunner(deps(listen), { queues: [first.queue, second.queue], pollMs: 60_000 });
    runner.start();
    await settle();
    expect(listened).toEqual(["work"]);
    const before = [first.requests.length, second.requests.length];
    for (const handler of handlers) handler();
    await settle();
    expect(first.requests.length).toBe((before[0] ?? 0) + 1);
    expect(second.requests.length).toBe((before[1] ?? 0) + 1);
    await runner.stop();
  });

  test("a claim that took less than it could waits for news: no claim again at once, none as its job ends", async () => {
    const entry = heldJob();
    const { queue, requests } = memoryQueue({ backlog: [entry] });
    const runner = createRunner(deps(), { queues: [queue], pollMs: 60_000 });
    runner.start();
    await settle();
    // One claim took the one job (less than the 4 it could): it found all that was due.
    expect(requests.length).toBe(1);
    entry.finish();
    await settle();
    // Nothing was waiting for that slot: its end calls for no claim (before: one at once, one per job's end).
    expect(requests.length).toBe(1);
    await runner.stop();
  });

  test("a full claim claims again at once, and a job's end then calls for another claim", async () => {
    const entries = [heldJob(), heldJob(), heldJob(), heldJob(), heldJob()];
    const { queue, requests } = memoryQueue({ backlog: [...entries], concurrency: 2 });
    const runner = createRunner(deps(), { queues: [queue], pollMs: 60_000 });
    runner.start();
    await settle();
    expect(requests.length).toBe(1);
    entries[0]?.finish();
    await settle();
    // Work may be waiting behind a full claim: the freed slot is claimed.
    expect(requests.length).toBe(2);
    for (const entry of entries) entry.finish();
    await runner.stop();
  });

  test("the periodic tasks share one timer: each runs at start, then on its own period, never twice at once", async () => {
    const runs = { fast: 0, slow: 0 };
    let release = () => {};
    const slowRun = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runner = createRunner(deps(), {
      queues: [],
      tasks: [
        { name: "fast", everyMs: 30, run: async () => ++runs.fast },
        {
          name: "slow",
          everyMs: 10,
          run: async () => {
            runs.slow += 1;
            await slowRun;
            return 1;
          },
        },
      ],
      pollMs: 60_000,
    });
    runner.start();
    await Bun.sleep(100);
    // The slow one is still in its first run: not started again; the fast one went on meanwhile.
    expect(runs.slow).toBe(1);
    expect(runs.fast).toBeGreaterThanOrEqual(2);
    release();
    await waitUntil(async () => runs.slow >= 2, { what: "the slow task's next run once its first ended" });
    await runner.stop();
  });
});
