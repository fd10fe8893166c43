import { sql } from "drizzle-orm";
import type { AnomalyKind } from "../../generated/constants.ts";
import type { Executor } from "../db/transaction.ts";
import type { Logger } from "../logger.ts";

export interface NewAnomaly {
  kind: AnomalyKind;
  provider: string;
  transactionId?: string;
  reference?: string;
  message: string;
}

/**
 * Raises something operators must look at: a row in `provider_anomalies` (GET /admin/v1/anomalies) and a
 * log line (error for a double delivery, warn otherwise). The same double delivery reported again is
 * recorded once. Ids are time-ordered (UUIDv7), so the listing keeps the order they were raised in.
 */
export async function raiseAnomaly(db: Executor, logger: Logger, anomaly: NewAnomaly): Promise<void> {
  const fields = { kind: anomaly.kind, provider: anomaly.provider, reference: anomaly.reference };
  if (anomaly.kind === "double_delivery") logger.error(fields, anomaly.message);
  else logger.warn(fields, anomaly.message);
  await db.execute(
    sql`insert into provider_anomalies (id, kind, provider, transaction_id, reference, message)
        values (${Bun.randomUUIDv7()}::uuid, ${anomaly.kind}, ${anomaly.provider}, ${anomaly.transactionId ?? null}::uuid,
                ${anomaly.reference ?? null}, ${anomaly.message})
        on conflict (kind, provider, reference) where reference is not null do nothing`,
  );
}
