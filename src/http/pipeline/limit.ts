import { isOperator, type Principal } from "../../lib/scope.ts";
import { type RateLimiter, type RateLimitStatus, rateLimitedError, rateLimitHeaders } from "../rate-limit.ts";

/** Which budget an answer's RateLimit headers show: the key's once it authenticated, else the client address's. */
export interface Budget {
  client: string;
  key?: RateLimitStatus;
  keyed: boolean;
}

export interface LimitDeps {
  rateLimiter: RateLimiter;
  /** A client address's budget for requests without a usable key (the RateLimit headers of those answers). */
  clientBudget(client: string): RateLimitStatus | undefined;
}

/** Spends one request of an API key's budget (429 past it); operators and unauthenticated operations spend none. */
export async function limit(deps: LimitDeps, principal: Principal, budget: Budget): Promise<void> {
  if (!principal || isOperator(principal)) return;
  budget.keyed = true;
  if (!deps.rateLimiter.enabled) return;
  const { allowed, status } = await deps.rateLimiter.acquire(principal.keyId);
  budget.key = status;
  if (!allowed)
    throw rateLimitedError(
      status,
      `Rate limit of ${status.limit} requests per ${status.windowSeconds} seconds exceeded for this key`,
    );
}

/** Every answer of the client API says where its budget stands: the key's, or for a request without a usable key, the address's. */
export function addRateLimitHeaders(deps: LimitDeps, response: Response, budget: Budget): void {
  const status = budget.keyed ? budget.key : deps.clientBudget(budget.client);
  if (!status) return;
  for (const [name, value] of Object.entries(rateLimitHeaders(status))) response.headers.set(name, value);
}
