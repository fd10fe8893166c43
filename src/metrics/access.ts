import { AppError } from "../errors.ts";
import { bearerOf, secretsEqual } from "../lib/secrets.ts";

export interface ScrapeAccess {
  enabled: boolean;
  /** When set, a scrape must carry `Authorization: Bearer <token>`. */
  token: string | undefined;
}

/**
 * Throws unless this scrape may read the metrics: off is 404 (as if there were no such route, like the
 * admin API without ADMIN_TOKEN), a missing or wrong bearer is 401. The comparison takes the same time
 * whatever the bearer.
 */
export function checkScrapeAccess(access: ScrapeAccess, authorization: string | null): void {
  if (!access.enabled) throw new AppError("NOT_FOUND", "No route for GET /metrics");
  if (access.token === undefined) return;
  if (!secretsEqual(bearerOf(authorization) ?? "", access.token)) {
    throw new AppError("UNAUTHENTICATED", "Metrics token required", null, { "www-authenticate": 'Bearer realm="metrics"' });
  }
}
