/** What a retention pass may delete: each kind of operational row, in the order a pass deletes them. */
export const retentionKinds = [
  "webhookAttempts",
  "deliveredWebhooks",
  "failedWebhooks",
  "deliveredEvents",
  "providerCallbacks",
  "sandboxOrders",
  "lowBalanceAnomalies",
  "requestLogs",
] as const;
export type RetentionKind = (typeof retentionKinds)[number];

export interface RetentionSettings {
  /** Days each kind is kept after it became final; 0 keeps it for ever. */
  days: Record<RetentionKind, number>;
  /** Rows one delete statement removes at most (RETENTION_BATCH_ROWS). */
  batchRows: number;
  /** A pass stops starting statements after this long, and the next pass goes on (RETENTION_PASS_SECONDS). */
  passSeconds: number;
}

/** The variable of each kind and its default in days. Money history has no variable: it is never deleted. */
export const retentionVariables: Record<RetentionKind, { variable: string; days: number }> = {
  webhookAttempts: { variable: "RETENTION_WEBHOOK_ATTEMPTS_DAYS", days: 30 },
  deliveredWebhooks: { variable: "RETENTION_WEBHOOK_DELIVERIES_DAYS", days: 30 },
  failedWebhooks: { variable: "RETENTION_FAILED_WEBHOOK_DELIVERIES_DAYS", days: 90 },
  // Listed by GET /api/v1/events: kept unless the operator chooses otherwise.
  deliveredEvents: { variable: "RETENTION_DELIVERED_EVENTS_DAYS", days: 0 },
  providerCallbacks: { variable: "RETENTION_PROVIDER_CALLBACKS_DAYS", days: 90 },
  sandboxOrders: { variable: "RETENTION_SANDBOX_ORDERS_DAYS", days: 7 },
  // A low float is a notice of its moment; double deliveries have no resolved state and are kept.
  lowBalanceAnomalies: { variable: "RETENTION_LOW_BALANCE_ANOMALIES_DAYS", days: 90 },
  // Bodies of every request: kept days, not months.
  requestLogs: { variable: "RETENTION_REQUEST_LOGS_DAYS", days: 7 },
};

/** How config.ts reads a whole number (its own validation and ConfigError), so this module imports nothing. */
export interface IntegerReader {
  integer(name: string, fallback: number, min: number, max: number): number;
}

/** The RETENTION_* variables, validated like every other setting. */
export function readRetentionSettings(reader: IntegerReader): RetentionSettings {
  const days = Object.fromEntries(
    retentionKinds.map((kind) => {
      const { variable, days: fallback } = retentionVariables[kind];
      return [kind, reader.integer(variable, fallback, 0, 36_500)];
    }),
  ) as Record<RetentionKind, number>;
  return {
    days,
    batchRows: reader.integer("RETENTION_BATCH_ROWS", 1000, 1, 100_000),
    passSeconds: reader.integer("RETENTION_PASS_SECONDS", 60, 1, 3600),
  };
}
