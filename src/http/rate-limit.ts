import { AppError } from "../errors.ts";

/** Fixed one-minute window per API key, per process. 0 disables it. */
export class RateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  check(subject: string, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    let window = this.windows.get(subject);
    if (!window || now - window.startedAt >= 60_000) {
      if (this.windows.size > 10_000) this.windows.clear();
      window = { startedAt: now, count: 0 };
      this.windows.set(subject, window);
    }
    window.count += 1;
    if (window.count > this.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((window.startedAt + 60_000 - now) / 1000));
      throw new AppError("RATE_LIMITED", `Rate limit of ${this.perMinute} requests per minute exceeded`, null, {
        "retry-after": String(retryAfter),
      });
    }
  }
}
