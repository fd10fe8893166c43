import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import type { Logger } from "../logger.ts";

const intervalMs = 60_000;

/**
 * Records each key's last use at most once a minute. A memory of this process's last write per key means
 * most requests write nothing; the write itself is guarded, so many processes together still write a key
 * at most about once a minute. It runs beside the request, never in its way; a failed write is logged
 * and tried again on the key's next use.
 */
export class KeyUsageRecorder {
  private readonly lastWritten = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly maxKeys = 100_000) {}

  record(db: Database, logger: Logger, keyId: string, now = Date.now()): void {
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && now - last < intervalMs) return;
    if (this.lastWritten.size >= this.maxKeys) this.lastWritten.clear();
    this.lastWritten.set(keyId, now);
    const write = db
      .update(apiKeys)
      .set({ lastUsedAt: sql`now()` })
      .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`))))
      .then(
        () => undefined,
        (error: unknown) => {
          this.lastWritten.delete(keyId);
          logger.warn({ err: error instanceof Error ? error.message : String(error), keyId }, "last_used_at not recorded");
        },
      );
    this.inFlight.add(write);
    void write.finally(() => this.inFlight.delete(write));
  }

  /** Resolves when every write begun so far has finished (shutdown, tests). */
  async settle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
