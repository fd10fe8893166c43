import type { components } from "../../generated/openapi-types.ts";
import type { transactions } from "../db/schema/index.ts";
import { maskDestination } from "../lib/mask.ts";

export type Transaction = components["schemas"]["Transaction"];
export type AdminTransaction = components["schemas"]["AdminTransaction"];
export type TransactionRow = typeof transactions.$inferSelect;

/** Metadata keys that hold a copy of the destination and are masked like it. */
const maskedMetadataKeys = ["meter_number", "phone_number", "smartcard_number"];

function presentMetadata(metadata: Record<string, string>): Record<string, string> {
  const out = { ...metadata };
  for (const key of maskedMetadataKeys) {
    const value = out[key];
    if (value !== undefined) out[key] = maskDestination(value);
  }
  return out;
}

/** The public shape of a transaction: destination and its metadata copies masked. */
export function presentTransaction(row: TransactionRow): Transaction {
  return {
    id: row.id,
    reference: row.reference,
    client_reference: row.clientReference,
    mode: row.mode,
    status: row.status,
    product_code: row.productCode,
    network: row.network,
    service: row.service as Transaction["service"],
    destination: maskDestination(row.destination),
    amount_kobo: row.amountKobo,
    price_kobo: row.priceKobo,
    metadata: presentMetadata(row.metadata),
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

export function presentAdminTransaction(row: TransactionRow): AdminTransaction {
  const { id, ...rest } = presentTransaction(row);
  return { id, account_id: row.accountId, ...rest, provider: row.provider };
}
