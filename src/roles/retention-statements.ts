import { deleteOldCallbacks } from "../callbacks/statements/delete-old-callbacks.ts";
import { deleteFinalOrders } from "../providers/sandbox/statements/delete-final-orders.ts";
import { deleteLowBalanceAnomalies } from "../providers/statements/delete-low-balance-anomalies.ts";
import { deleteOldLogs } from "../request-logs/statements/delete-old-logs.ts";
import type { RetentionStatements } from "../retention/delete-batch.ts";
import { deleteDeliveredEvents } from "../webhooks/statements/delete-delivered-events.ts";
import { deleteFinalDeliveries } from "../webhooks/statements/delete-final-deliveries.ts";
import { deleteOldAttempts } from "../webhooks/statements/delete-old-attempts.ts";

/**
 * The delete of each retention kind, written by the owner of its table and handed to the pass (src/retention/
 * knows no feature). Each goes through an index that starts at the oldest row and ends at the cutoff. Money
 * history has none: transactions, ledger entries, provider attempts, audit entries, batches, and events a
 * delivery still has to carry.
 */
export const retentionStatements: RetentionStatements = {
  webhookAttempts: deleteOldAttempts,
  deliveredWebhooks: deleteFinalDeliveries("succeeded"),
  failedWebhooks: deleteFinalDeliveries("failed"),
  deliveredEvents: deleteDeliveredEvents,
  providerCallbacks: deleteOldCallbacks,
  sandboxOrders: deleteFinalOrders,
  lowBalanceAnomalies: deleteLowBalanceAnomalies,
  requestLogs: deleteOldLogs,
};
