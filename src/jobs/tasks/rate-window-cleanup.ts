import type { Task } from "../../lib/job-queue.ts";

/** What the clean-up needs of the rate limiter: the deletion of the windows it no longer reads. */
export interface RateWindows {
  deleteOldWindows(): Promise<number>;
}

/**
 * The shared rate-limit windows (`rate_limit_windows`) that ended before the previous one began, deleted
 * once a minute (a window's length) by every background process; the rows deleted are its count.
 */
export function rateWindowCleanupTask(deps: { rateLimiter: RateWindows }): Task {
  return { name: "rate-window cleanup", everyMs: 60_000, run: () => deps.rateLimiter.deleteOldWindows() };
}
