import type { components } from "../generated/openapi-fetch-client.ts";
import type { Column } from "./output.ts";

type Schemas = components["schemas"];
export type Transaction = Schemas["Transaction"];
export type Product = Schemas["Product"];
export type PricingItem = Schemas["PricingItem"];
export type Network = Schemas["Network"];

export const transactionColumns: Column<Transaction>[] = [
  { key: "reference" },
  { key: "status" },
  { key: "service" },
  { key: "network" },
  { key: "product_code", header: "PRODUCT" },
  { key: "destination" },
  { key: "amount_kobo", money: true },
  { key: "price_kobo", money: true },
  { key: "created_at", header: "CREATED" },
];

export const transactionDetailColumns: Column<Transaction>[] = [
  { key: "reference" },
  { key: "id" },
  { key: "client_reference" },
  { key: "mode" },
  { key: "status" },
  { key: "service" },
  { key: "network" },
  { key: "product_code", header: "PRODUCT" },
  { key: "destination" },
  { key: "amount_kobo", money: true },
  { key: "price_kobo", money: true },
  { key: "metadata" },
  { key: "created_at", header: "CREATED" },
  { key: "completed_at", header: "COMPLETED" },
];

export const walletColumns: Column<Schemas["Wallet"]>[] = [
  { key: "mode" },
  { key: "balance_kobo", money: true },
  { key: "held_kobo", money: true },
  { key: "available_kobo", money: true },
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

export const networkColumns: Column<Network>[] = [{ key: "code" }, { key: "name" }, { key: "service" }];
export const serviceColumns: Column<Schemas["Service"]>[] = [{ key: "code" }, { key: "name" }];

export const productColumns: Column<Product>[] = [
  { key: "code" },
  { key: "name" },
  { key: "service" },
  { key: "network" },
  { key: "kind" },
  { key: "price_kobo", money: true },
  { key: "min_amount_kobo", header: "MIN", money: true },
  { key: "max_amount_kobo", header: "MAX", money: true },
  { key: "discount_bps", header: "DISCOUNT_BPS" },
];

export const pricingColumns: Column<PricingItem>[] = [
  { key: "product_code", header: "PRODUCT" },
  { key: "service" },
  { key: "network" },
  { key: "kind" },
  { key: "price_kobo", money: true },
  { key: "min_amount_kobo", header: "MIN", money: true },
  { key: "max_amount_kobo", header: "MAX", money: true },
  { key: "discount_bps", header: "DISCOUNT_BPS" },
];

export const meterColumns: Column<Schemas["MeterVerification"]>[] = [
  { key: "network", header: "DISCO" },
  { key: "meter_number", header: "METER" },
  { key: "meter_type" },
  { key: "customer_name", header: "CUSTOMER" },
  { key: "address" },
  { key: "min_amount_kobo", header: "MINIMUM", money: true },
];

export const smartcardColumns: Column<Schemas["SmartcardVerification"]>[] = [
  { key: "network", header: "BILLER" },
  { key: "smartcard_number", header: "SMARTCARD" },
  { key: "customer_name", header: "CUSTOMER" },
  { key: "current_bouquet", header: "BOUQUET" },
  { key: "due_date" },
];

export const accountColumns: Column<Schemas["Account"]>[] = [{ key: "id" }, { key: "name" }, { key: "created_at" }];

type AccountCreated = Schemas["AccountCreated"];
const keyOf = (created: AccountCreated, mode: string) => created.keys.find((k) => k.mode === mode)?.key;
export const accountCreatedColumns: Column<AccountCreated>[] = [
  { key: "id", get: (a) => a.account.id },
  { key: "name", get: (a) => a.account.name },
  { key: "test_key", get: (a) => keyOf(a, "test") },
  { key: "live_key", get: (a) => keyOf(a, "live") },
];

const apiKeyFields = <T extends Schemas["ApiKey"]>(): Column<T>[] => [
  { key: "id" },
  { key: "account_id" },
  { key: "mode" },
  { key: "prefix" },
  { key: "created_at" },
  { key: "revoked_at" },
];
export const apiKeyColumns = apiKeyFields<Schemas["ApiKey"]>();
export const apiKeyCreatedColumns: Column<Schemas["ApiKeyCreated"]>[] = [
  ...apiKeyFields<Schemas["ApiKeyCreated"]>(),
  { key: "key" },
];

export const callbackColumns: Column<Schemas["StoredCallback"]>[] = [
  { key: "id" },
  { key: "provider" },
  { key: "reference" },
  { key: "event_id" },
  { key: "received_at" },
  { key: "http_status", header: "HTTP" },
  { key: "result_code", header: "RESULT" },
  { key: "signature_valid", header: "SIGNED" },
  { key: "replay_of" },
];

const endpointFields = <T extends Schemas["WebhookEndpoint"]>(): Column<T>[] => [
  { key: "id" },
  { key: "url" },
  { key: "description" },
  { key: "mode" },
  { key: "created_at" },
];
export const endpointColumns = endpointFields<Schemas["WebhookEndpoint"]>();
export const endpointCreatedColumns: Column<Schemas["WebhookEndpointCreated"]>[] = [
  ...endpointFields<Schemas["WebhookEndpointCreated"]>(),
  { key: "secret" },
];

export const eventColumns: Column<Schemas["Event"]>[] = [
  { key: "id" },
  { key: "type" },
  { key: "created_at" },
  { key: "reference", get: (e) => e.data.reference },
  { key: "status", get: (e) => e.data.status },
  { key: "deliveries", get: (e) => e.deliveries.map((d) => `${d.status}/${d.attempts}`).join(" ") || "-" },
];
