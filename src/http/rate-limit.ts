import { AppError } from "../errors.ts";
import { FixedWindowCounter } from "../lib/fixed-window.ts";

/** Fixed one-minute window per API key, per process. 0 disables it. */
export class RateLimiter {
  private readonly windows = new FixedWindowCounter();

  constructor(private readonly perMinute: number) {}

  check(subject: string, now = Date.now()): void {
    if (this.perMinute <= 0) return;
    if (this.windows.add(subject, now) > this.perMinute) {
      throw new AppError("RATE_LIMITED", `Rate limit of ${this.perMinute} requests per minute exceeded`, null, {
        "retry-after": String(this.windows.secondsLeft(subject, now)),
      });
    }
  }
}
