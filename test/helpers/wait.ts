/** What a check returns while the awaited thing has not happened. */
type NotYet = false | null | undefined;

export interface WaitOptions {
  /** What the test is waiting for, in words: the failure reads "<what> not within <n> s". */
  what: string;
  /** Generous by default: a loaded 2-core machine is slow, and a quick answer costs nothing. */
  timeoutMs?: number;
  /** Pause between checks. */
  intervalMs?: number;
  /** What to add to the failure, read when it fails (a process's output so far, say). */
  detail?: () => string;
}

/**
 * Checks `check` until it returns a truthy value (a value, or a promise of one) and returns that value;
 * at the deadline it throws saying what did not happen. The one way tests wait for background work or an
 * event they cannot await directly, instead of sleeping a fixed time and hoping.
 */
export async function waitUntil<T>(
  check: () => T | NotYet | Promise<T | NotYet>,
  { what, timeoutMs = 20_000, intervalMs = 10, detail }: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs / 1000} s${detail ? `:\n${detail()}` : ""}`);
    await Bun.sleep(intervalMs);
  }
}
