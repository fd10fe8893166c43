import { createHash, timingSafeEqual } from "node:crypto";
import { AppError } from "../errors.ts";

export interface ScrapeAccess {
  enabled: boolean;
  /** When set, a scrape must carry `Authorization: Bearer <token>`. */
  token: string | undefined;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Throws unless this scrape may read the metrics: off is 404 (as if there were no such route, like the
 * admin API without ADMIN_TOKEN), a missing or wrong bearer is 401. The comparison takes the same time
 * whatever the bearer.
 */
export function checkScrapeAccess(access: ScrapeAccess, authorization: string | null): void {
  if (!access.enabled) throw new AppError("NOT_FOUND", "No route for GET /metrics");
  if (access.token === undefined) return;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";
  if (!timingSafeEqual(digest(bearer), digest(access.token))) {
    throw new AppError("UNAUTHENTICATED", "Metrics token required", null, { "www-authenticate": 'Bearer realm="metrics"' });
  }
}
