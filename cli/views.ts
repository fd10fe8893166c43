import type { components } from "../generated/openapi-fetch-client.ts";
import type { Column } from "./output.ts";

type Schemas = components["schemas"];
export type Transaction = Schemas["Transaction"];
export type Product = Schemas["Product"];
export type PricingItem = Schemas["PricingItem"];
export type Network = Schemas["Network"];

/** Columns that show the API fields as they are. */
export const fields = <T>(...keys: string[]): Column<T>[] => keys.map((key) => ({ key }));
/** Money columns: NGN with two decimals in tables. */
const money = <T>(...keys: string[]): Column<T>[] => keys.map((key) => ({ key, money: true }));
const productCode = { key: "product_code", header: "PRODUCT" };
const created = { key: "created_at", header: "CREATED" };

/**
 * Metadata already shown by other columns (the token, units, copies of the destination) or only of interest to
 * the service; the summary column shows the rest: the client's own keys, partial data deliveries, resolutions.
 */
const shownElsewhere = new Set([
  "data_type",
  "plan_name",
  "product_id",
  "route",
  "token",
  "units",
  "receipt_number",
  "meter_number",
  "meter_type",
  "phone_number",
  "smartcard_number",
  "failure_code",
  "failure_message",
]);
const summaryWidth = 40;

/** The client's metadata as `key=value …`, shortened to fit a table. */
function metadataSummary(t: Transaction): string {
  const text = Object.entries(t.metadata)
    .filter(([key]) => !shownElsewhere.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
  return text.length > summaryWidth ? `${text.slice(0, summaryWidth - 1)}…` : text;
}

const meta = (key: string) => (t: Transaction) => t.metadata[key];
/** Why a failed transaction failed: the service's words and its code (nothing for any other). */
const failureReason = (t: Transaction) =>
  t.metadata.failure_code === undefined ? undefined : `${t.metadata.failure_message ?? ""} (${t.metadata.failure_code})`.trim();
/** In tables: an electricity token and its units in their own columns, the rest of the metadata summarised. */
const metadataColumns: Column<Transaction>[] = [
  { key: "token", get: meta("token"), only: "table", hideEmpty: true },
  { key: "units", get: meta("units"), only: "table", hideEmpty: true },
  { key: "metadata", header: "META", get: metadataSummary, only: "table", hideEmpty: true },
];

/** Tables show a summary; CSV has every field of the API (metadata as JSON in one cell). */
export const transactionColumns: Column<Transaction>[] = [
  { key: "reference" },
  { key: "id", only: "csv" },
  { key: "client_reference", only: "csv" },
  { key: "mode", only: "csv" },
  ...fields("status", "service", "network"),
  productCode,
  { key: "destination" },
  ...money("amount_kobo", "price_kobo"),
  { key: "failure_code", header: "FAILURE", get: meta("failure_code"), only: "table", hideEmpty: true },
  ...metadataColumns,
  { key: "metadata", only: "csv" },
  created,
  { key: "completed_at", only: "csv" },
];

export const transactionDetailColumns: Column<Transaction>[] = [
  ...fields("reference", "id", "client_reference", "mode", "status", "service", "network"),
  productCode,
  { key: "destination" },
  ...money("amount_kobo", "price_kobo"),
  { key: "failure", header: "FAILED BECAUSE", get: failureReason, only: "table", hideEmpty: true },
  ...metadataColumns.filter((c) => c.key !== "metadata"),
  { key: "metadata" },
  created,
  { key: "completed_at", header: "COMPLETED" },
];

export const walletColumns: Column<Schemas["Wallet"]>[] = [
  { key: "mode" },
  ...money("balance_kobo", "held_kobo", "available_kobo"),
  { key: "low_balance_threshold_kobo", header: "ALERT BELOW", money: true },
];

export type Movement = Schemas["WalletMovement"];
export const movementColumns: Column<Movement>[] = [
  { key: "kind", get: (m) => m.entry.kind },
  { key: "mode", get: (m) => m.wallet.mode },
  { key: "amount_kobo", money: true, get: (m) => m.entry.amount_kobo },
  { key: "note", get: (m) => m.entry.note },
  { key: "balance_kobo", money: true, get: (m) => m.wallet.balance_kobo },
  { key: "available_kobo", money: true, get: (m) => m.wallet.available_kobo },
];

export const networkColumns: Column<Network>[] = fields("code", "name", "service");
export const serviceColumns: Column<Schemas["Service"]>[] = fields("code", "name");

/** Price, range and discount columns of products and pricing items. */
const priceColumns = [
  { key: "price_kobo", money: true },
  { key: "min_amount_kobo", header: "MIN", money: true },
  { key: "max_amount_kobo", header: "MAX", money: true },
  { key: "discount_bps", header: "DISCOUNT_BPS" },
];

export const productColumns: Column<Product>[] = [...fields("code", "name", "service", "network", "kind"), ...priceColumns];
export const pricingColumns: Column<PricingItem>[] = [productCode, ...fields("service", "network", "kind"), ...priceColumns];

export const meterColumns: Column<Schemas["MeterVerification"]>[] = [
  { key: "network", header: "DISCO" },
  { key: "meter_number", header: "METER" },
  { key: "meter_type" },
  { key: "customer_name", header: "CUSTOMER" },
  { key: "address" },
  { key: "min_amount_kobo", header: "MINIMUM", money: true },
];

export const smartcardColumns: Column<Schemas["SmartcardVerification"]>[] = [
  { key: "biller", header: "BILLER" },
  { key: "smartcard_number", header: "SMARTCARD" },
  { key: "customer_name", header: "CUSTOMER" },
  { key: "current_bouquet", header: "BOUQUET" },
  { key: "due_date" },
];

export const accountColumns: Column<Schemas["Account"]>[] = fields("id", "name", "created_at");

type AccountCreated = Schemas["AccountCreated"];
const keyOf = (created: AccountCreated, mode: string) => created.keys.find((k) => k.mode === mode)?.key;
export const accountCreatedColumns: Column<AccountCreated>[] = [
  { key: "id", get: (a) => a.account.id },
  { key: "name", get: (a) => a.account.name },
  { key: "test_key", get: (a) => keyOf(a, "test") },
  { key: "live_key", get: (a) => keyOf(a, "live") },
];

export const apiKeyColumns: Column<Schemas["ApiKey"]>[] = fields(
  "id",
  "account_id",
  "mode",
  "prefix",
  "created_at",
  "revoked_at",
);
export const apiKeyCreatedColumns: Column<Schemas["ApiKeyCreated"]>[] = [...apiKeyColumns, { key: "key" }];

export const callbackColumns: Column<Schemas["StoredCallback"]>[] = [
  ...fields("id", "provider", "reference", "event_id", "received_at"),
  { key: "http_status", header: "HTTP" },
  { key: "result_code", header: "RESULT" },
  { key: "signature_valid", header: "SIGNED" },
  { key: "replay_of" },
];

export const endpointColumns: Column<Schemas["WebhookEndpoint"]>[] = [
  ...fields("id", "url", "description", "mode"),
  { key: "enabled", get: (e) => (e.enabled ? "yes" : `no (${e.disabled_reason ?? "disabled"})`), only: "table" },
  { key: "enabled", only: "csv" },
  { key: "event_types", header: "EVENTS", get: (e) => e.event_types?.join(",") ?? "all", only: "table" },
  { key: "event_types", get: (e) => e.event_types?.join(",") ?? "", only: "csv" },
  { key: "failing_since", hideEmpty: true },
  ...fields("created_at"),
];
export const endpointCreatedColumns: Column<Schemas["WebhookEndpointCreated"]>[] = [
  ...endpointColumns,
  { key: "previous_secret_expires_at", header: "OLD SECRET SIGNS UNTIL", hideEmpty: true },
  { key: "secret" },
];
export const pingColumns: Column<Schemas["WebhookPingResult"]>[] = fields(
  "endpoint_id",
  "webhook_id",
  "delivered",
  "status_code",
  "error",
  "duration_ms",
);

export const eventColumns: Column<Schemas["Event"]>[] = [
  ...fields("id", "type", "created_at"),
  { key: "reference", get: (e) => ("reference" in e.data ? e.data.reference : "-") },
  { key: "status", get: (e) => ("status" in e.data && typeof e.data.status === "string" ? e.data.status : "-") },
  { key: "deliveries", get: (e) => e.deliveries.map((d) => `${d.status}/${d.attempts}`).join(" ") || "-" },
];

export type VendBatch = Schemas["VendBatch"];
type BatchCount = keyof VendBatch["counts"];
const batchCount = (key: BatchCount, only?: "table" | "csv"): Column<VendBatch> => ({ key, get: (b) => b.counts[key], only });
const inProgress = (b: VendBatch) => b.counts.queued + b.counts.processing + b.counts.pending;
const shownRejections = 5;

/** The rejections as `#index status CODE`, the first few. */
function rejectionSummary(b: VendBatch): string {
  const shown = b.rejections.slice(0, shownRejections).map((r) => `#${r.index} ${r.status} ${r.error.code}`);
  const more = b.rejections.length - shown.length;
  return [...shown, ...(more > 0 ? [`… and ${more} more`] : [])].join(", ") || "-";
}

/** Tables count the orders still in progress together; CSV has every count and field of the API. */
export const batchColumns: Column<VendBatch>[] = [
  { key: "id" },
  { key: "mode", only: "csv" },
  { key: "order_count", header: "ORDERS" },
  { key: "in_progress", header: "IN PROGRESS", get: inProgress, only: "table" },
  ...(["queued", "processing", "pending"] as const).map((key) => batchCount(key, "csv")),
  ...(["successful", "failed", "refused", "invalid"] as const).map((key) => batchCount(key)),
  created,
  { key: "completed_at", header: "COMPLETED" },
];

export const batchDetailColumns: Column<VendBatch>[] = [
  ...fields<VendBatch>("id", "mode"),
  { key: "order_count", header: "ORDERS" },
  ...(["queued", "processing", "pending", "successful", "failed", "refused", "invalid"] as const).map((key) => batchCount(key)),
  { key: "rejections", get: rejectionSummary, only: "table" },
  { key: "rejections", get: (b) => JSON.stringify(b.rejections), only: "csv" },
  created,
  { key: "completed_at", header: "COMPLETED" },
];
