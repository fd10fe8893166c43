import type { Executor } from "../db/executor.ts";
import { claimRateBudget, deleteRateWindowsBefore } from "../db/rate-windows.ts";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";

/** What the RateLimit headers say about one budget after a request. */
export interface RateLimitStatus {
  limit: number;
  /** Requests left in the window (an estimate when several processes share the budget). */
  remaining: number;
  /** Whole seconds, at least 1, until the window ends and the budget is whole again. */
  resetSeconds: number;
  windowSeconds: number;
}

/** The RateLimit headers of draft-ietf-httpapi-ratelimit-headers (the three-header form) and the policy. */
export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    "ratelimit-limit": String(status.limit),
    "ratelimit-remaining": String(status.remaining),
    "ratelimit-reset": String(status.resetSeconds),
    "ratelimit-policy": `${status.limit};w=${status.windowSeconds}`,
  };
}

export function rateLimitedError(status: RateLimitStatus, message: string): AppError {
  return new AppError("RATE_LIMITED", message, null, {
    "retry-after": String(status.resetSeconds),
    ...rateLimitHeaders(status),
  });
}

export interface RateLimiterOptions {
  /** Requests per subject per window; 0 turns the limiter off (it then does nothing at all). */
  perMinute: number;
  /** Where the shared windows live; read at each claim, so a test that swaps the database swaps it here. */
  db: () => Executor;
  logger: () => Logger;
  windowMs?: number;
  /** The largest block one claim takes (default: no bound; 1 claims for every request). */
  maxBlock?: number;
  /** The clock (tests freeze it so that no request falls in the next window). */
  now?: () => number;
}

interface SubjectWindow {
  windowStart: number;
  /** Claimed by this process and not yet spent. */
  tokens: number;
  /** Claimed by every process, as the last claim saw it (at most the limit). */
  claimed: number;
  /** The shared window is spent: refuse without asking the database again. */
  full: boolean;
  /** Requests waiting for a claim; the next block is at least this large. */
  waiting: number;
  pending: Promise<void> | undefined;
}

/** A claim takes this fraction of what the window has left, so blocks shrink as the window fills. */
const blockDivisor = 8;

/**
 * A fixed window per subject (an API key) shared by every process on one database. Windows are aligned
 * to the clock (multiples of the window length), so every process counts into the same row. A process
 * claims a block of the budget with one statement and spends it from memory; each block is an eighth of
 * what the window has left (at least the requests waiting for it), so a lone process still gets the whole
 * limit, processes together never get more, and what a process may hold unspent shrinks as the window
 * fills. Once the database says the window is spent, this process refuses the subject from memory until
 * the window ends.
 *
 * When the database cannot be reached the limiter fails open: the subject is counted in this process
 * alone for the rest of the window (what the window had left as last seen), with one log line per window.
 */
export class RateLimiter {
  private readonly windows = new Map<string, SubjectWindow>();
  private readonly windowMs: number;
  private readonly maxBlock: number;
  private readonly now: () => number;
  private currentWindow = 0;
  private outageLoggedFor = 0;

  constructor(private readonly options: RateLimiterOptions) {
    this.windowMs = options.windowMs ?? 60_000;
    this.maxBlock = options.maxBlock ?? Number.POSITIVE_INFINITY;
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.options.perMinute > 0;
  }

  /**
   * Spends one request of `subject`'s budget, claiming from the database when this process holds none.
   * Answers the status for the headers and whether the request may go on.
   */
  async acquire(subject: string, now = this.now()): Promise<{ allowed: boolean; status: RateLimitStatus }> {
    const window = this.windowOf(subject, now);
    while (window.tokens === 0 && !window.full) {
      window.waiting += 1;
      try {
        window.pending ??= this.claim(subject, window).finally(() => {
          window.pending = undefined;
        });
        await window.pending;
      } finally {
        window.waiting -= 1;
      }
    }
    const allowed = window.tokens > 0;
    if (allowed) window.tokens -= 1;
    const limit = this.options.perMinute;
    const windowSeconds = Math.round(this.windowMs / 1000);
    return {
      allowed,
      status: {
        limit,
        remaining: limit - window.claimed + window.tokens,
        resetSeconds: Math.min(windowSeconds, Math.max(1, Math.ceil((window.windowStart + this.windowMs - now) / 1000))),
        windowSeconds,
      },
    };
  }

  /** Deletes the shared windows that ended before the previous one began (a background task, once a window). */
  async deleteOldWindows(now = this.now()): Promise<number> {
    return deleteRateWindowsBefore(this.options.db(), new Date(this.windowStartOf(now) - this.windowMs));
  }

  private windowStartOf(now: number): number {
    return Math.floor(now / this.windowMs) * this.windowMs;
  }

  private windowOf(subject: string, now: number): SubjectWindow {
    // A clock stepped back stays in the window already reached rather than reopening an older one.
    const windowStart = Math.max(this.windowStartOf(now), this.currentWindow);
    if (windowStart > this.currentWindow) {
      // A new window: what this process remembers of older ones goes (their rows go by the background task
      // src/jobs/tasks/rate-window-cleanup.ts).
      this.currentWindow = windowStart;
      this.windows.clear();
    }
    let window = this.windows.get(subject);
    if (!window) {
      window = { windowStart, tokens: 0, claimed: 0, full: false, waiting: 0, pending: undefined };
      this.windows.set(subject, window);
    }
    return window;
  }

  private async claim(subject: string, window: SubjectWindow): Promise<void> {
    const limit = this.options.perMinute;
    const left = limit - window.claimed;
    const amount = Math.max(1, Math.min(left, this.maxBlock, Math.max(window.waiting, Math.ceil(left / blockDivisor))));
    try {
      const { granted, used } = await claimRateBudget(this.options.db(), {
        subject,
        windowStart: new Date(window.windowStart),
        amount,
        limit,
      });
      window.tokens += granted;
      window.claimed = used;
      if (granted === 0 || used >= limit) window.full = true;
    } catch (error) {
      // Fail open: the rest of the window as last seen, counted here alone, rather than failing requests.
      window.tokens += left;
      window.claimed = limit;
      window.full = true;
      if (this.outageLoggedFor !== window.windowStart) {
        this.outageLoggedFor = window.windowStart;
        this.options
          .logger()
          .error(
            { err: error instanceof Error ? error.message : String(error) },
            "rate limit store unavailable; counting in this process alone until the window ends",
          );
      }
    }
  }
}
