/**
 * Counts events per subject in fixed windows, in this process. Bounded: past `maxSubjects` the subject
 * whose window started first is forgotten, so a flood of new subjects costs memory, never unbounded.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly maxSubjects = 10_000,
  ) {}

  /** Events counted for `subject` in its current window. */
  count(subject: string, now = Date.now()): number {
    return this.current(subject, now)?.count ?? 0;
  }

  /** Counts one event and answers the window's count including it. */
  add(subject: string, now = Date.now()): number {
    let window = this.current(subject, now);
    if (!window) {
      this.windows.delete(subject);
      if (this.windows.size >= this.maxSubjects) {
        const oldest = this.windows.keys().next();
        if (!oldest.done) this.windows.delete(oldest.value);
      }
      window = { startedAt: now, count: 0 };
      this.windows.set(subject, window);
    }
    window.count += 1;
    return window.count;
  }

  /** Whole seconds (at least 1) until `subject`'s window ends; `idle` when it has none running. */
  secondsLeft(subject: string, now = Date.now(), idle = 1): number {
    const window = this.current(subject, now);
    return window ? Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000)) : idle;
  }

  private current(subject: string, now: number): { startedAt: number; count: number } | undefined {
    const window = this.windows.get(subject);
    return window && now - window.startedAt < this.windowMs ? window : undefined;
  }
}
