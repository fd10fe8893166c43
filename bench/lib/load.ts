import { stopping } from "./cleanup.ts";

/**
 * The HTTP load generator, the same for every side: Bun's fetch with kept-alive connections, a request's
 * headers prepared once per target, only the Idempotency-Key made per request.
 */
export interface Target {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  ok: number;
  failed: number;
  seconds: number;
  perSecond: number;
  /** Up to three failure descriptions, to show why. */
  failures: string[];
}

let sequence = 0;

async function send(target: Target, expected: number): Promise<string | undefined> {
  const res = await fetch(target.url, {
    method: "POST",
    headers: { ...target.headers, "idempotency-key": `bench-${process.pid}-${(sequence++).toString(36)}` },
    body: target.body,
  });
  const text = await res.text();
  return res.status === expected ? undefined : `${res.status} ${text.slice(0, 200)}`;
}

/**
 * `concurrency` loops, each starting its next call (`once(n)`, n counting calls across loops; it answers a
 * problem, or undefined when all went well) as soon as its last one ends, while `more(n)` says so.
 */
export async function loops(
  concurrency: number,
  more: (n: number) => boolean,
  once: (n: number) => Promise<string | undefined>,
): Promise<LoadResult> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  const failures: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (more(next) && !stopping()) {
        const problem = await once(next++).catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
        if (problem === undefined) ok += 1;
        else {
          failed += 1;
          if (failures.length < 3) failures.push(problem);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { ok, failed, seconds: elapsed, perSecond: ok / elapsed, failures };
}

/** `concurrency` loops, each sending its next request when the last is answered, for `seconds`. */
export function closedLoop(targets: Target[], concurrency: number, seconds: number, expected = 202): Promise<LoadResult> {
  const deadline = performance.now() + seconds * 1000;
  return loops(
    concurrency,
    () => performance.now() < deadline,
    (n) => send(targets[n % targets.length] as Target, expected),
  );
}

export interface OpenLoopProgress {
  sent: number;
  answered: number;
  ok: number;
  failed: number;
  /** Requests that were due but held back because `maxInFlight` were unanswered. */
  behind: number;
}

/**
 * Open loop: requests leave at `rate` per second whatever the answers do (up to `maxInFlight` unanswered),
 * for `seconds`; resolves when every request sent has been answered.
 */
export async function openLoop(
  targets: Target[],
  rate: number,
  seconds: number,
  progress: OpenLoopProgress,
  maxInFlight = 512,
  expected = 202,
): Promise<string[]> {
  const failures: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const durationMs = seconds * 1000;
  for (let elapsed = 0; elapsed < durationMs && !stopping(); elapsed = performance.now() - started) {
    const due = Math.floor((rate * elapsed) / 1000);
    while (progress.sent < due && inFlight.size < maxInFlight) {
      const target = targets[progress.sent % targets.length] as Target;
      progress.sent += 1;
      const request: Promise<void> = send(target, expected)
        .catch((error: unknown) => (error instanceof Error ? error.message : String(error)))
        .then((problem) => {
          progress.answered += 1;
          if (problem === undefined) progress.ok += 1;
          else {
            progress.failed += 1;
            if (failures.length < 3) failures.push(problem);
          }
          inFlight.delete(request);
        });
      inFlight.add(request);
    }
    progress.behind = due - progress.sent;
    await Bun.sleep(1);
  }
  await Promise.all(inFlight);
  return failures;
}

/** Exactly `total` requests from `concurrency` loops (to queue work, not to time it). */
export function closedLoopCount(targets: Target[], concurrency: number, total: number, expected = 202): Promise<LoadResult> {
  return loops(
    concurrency,
    (n) => n < total,
    (n) => send(targets[n % targets.length] as Target, expected),
  );
}
