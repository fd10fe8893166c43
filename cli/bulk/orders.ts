import { type ServiceCode, serviceCodes } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../../src/lib/shared/destinations.ts";
import type { CsvRecord } from "../csv.ts";
import { parseNgn } from "../money.ts";

export type BatchOrder = components["schemas"]["VendBatchOrder"];

/** The metadata key vendctl sets on every order: the line of the file it came from, to match answers to rows. */
export const lineKey = "vendctl_line";

/** Columns a bulk file may have; `metadata.<key>` columns besides. */
export const bulkColumns = [
  "service",
  "product_code",
  "destination",
  "amount",
  "network",
  "disco",
  "biller",
  "meter_type",
  "phone_number",
  "client_reference",
] as const;
type ColumnName = (typeof bulkColumns)[number];
const metadataPrefix = "metadata.";
/** The API takes 20 metadata keys; one is vendctl's. */
const maxMetadataKeys = 19;

/** One data row of the file, ready to send: the line it starts on and the order as the API takes it. */
export interface BulkOrder {
  line: number;
  clientReference: string | null;
  order: BatchOrder;
  /** An airtime row without a product code: the network's airtime product is looked up before sending. */
  needsAirtimeProduct?: string;
}

/** A row vendctl refuses before sending anything. */
export interface RowProblem {
  line: number;
  message: string;
}

interface Header {
  columns: Map<ColumnName, number>;
  metadata: [key: string, index: number][];
  width: number;
}

/** The header row's columns, or what is wrong with them (every problem at once). */
export function readHeader(record: CsvRecord): Header | RowProblem[] {
  const columns = new Map<ColumnName, number>();
  const metadata: [string, number][] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  record.fields.forEach((raw, index) => {
    const name = raw.trim();
    const lower = name.toLowerCase();
    if (seen.has(lower)) problems.push(`column "${name}" appears twice`);
    seen.add(lower);
    const known = bulkColumns.find((c) => c === lower);
    if (known) columns.set(known, index);
    else if (lower.startsWith(metadataPrefix) && name.length > metadataPrefix.length) {
      const key = name.slice(metadataPrefix.length);
      if (key === lineKey) problems.push(`column "${name}": ${lineKey} is set by vendctl`);
      else if (key.length > 40) problems.push(`column "${name}": a metadata key has at most 40 characters`);
      else metadata.push([key, index]);
    } else {
      problems.push(`unknown column "${name}"`);
    }
  });
  if (!columns.has("service")) problems.push('no "service" column');
  if (metadata.length > maxMetadataKeys) problems.push(`at most ${maxMetadataKeys} metadata.<key> columns`);
  if (problems.length > 0) {
    const known = `columns: ${bulkColumns.join(", ")}, metadata.<key>`;
    return [...problems, known].map((message) => ({ line: record.line, message }));
  }
  return { columns, metadata, width: record.fields.length };
}

type Cells = (name: ColumnName) => string;

/** The destination fields of each service, checked as the single vend checks them. */
function destinationOf(service: ServiceCode, cell: Cells, problems: string[]): Record<string, string> {
  const destination = cell("destination");
  const phone = cell("phone_number");
  const checkPhone = (value: string, column: string) => {
    if (normalisePhone(value) === null) problems.push(`${column} "${value}" is not a Nigerian phone number such as 08031234567`);
  };
  if (service === "airtime" || service === "data") {
    if (destination && phone && normalisePhone(destination) !== normalisePhone(phone)) {
      problems.push("destination and phone_number differ; give the phone number once");
    }
    const number = destination || phone;
    if (!number) problems.push("no destination (the phone number to top up)");
    else checkPhone(number, destination ? "destination" : "phone_number");
    return number ? { phone_number: number } : {};
  }
  if (phone) checkPhone(phone, "phone_number");
  const extra: Record<string, string> = phone ? { phone_number: phone } : {};
  if (service === "electricity") {
    if (!destination) problems.push("no destination (the meter number)");
    else if (!isMeterNumber(destination)) problems.push(`destination "${destination}" is not a meter number (11 to 13 digits)`);
    return { meter_number: destination, ...extra };
  }
  if (!destination) problems.push("no destination (the smartcard number)");
  else if (!isSmartcardNumber(destination))
    problems.push(`destination "${destination}" is not a smartcard number (10 to 12 digits)`);
  return { smartcard_number: destination, ...extra };
}

/** The network, disco or biller of the row: one of the three columns. */
function networkOf(cell: Cells, problems: string[]): string {
  const given = (["network", "disco", "biller"] as const).filter((c) => cell(c));
  if (given.length > 1) problems.push(`${given.join(" and ")} both given; fill one of them`);
  // Codes are lower case; spreadsheets like to capitalise ("MTN").
  return (given.map((c) => cell(c))[0] ?? "").toLowerCase();
}

function amountOf(cell: Cells, problems: string[]): number | undefined {
  const amount = cell("amount");
  if (!amount) return undefined;
  try {
    return parseNgn(amount, "amount");
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/** One data row as an order, or its problems. */
function orderOf(record: CsvRecord, header: Header): BulkOrder | RowProblem[] {
  if (record.fields.length !== header.width) {
    return [{ line: record.line, message: `${record.fields.length} fields, but the header has ${header.width}` }];
  }
  const cell: Cells = (name) => {
    const index = header.columns.get(name);
    return index === undefined ? "" : (record.fields[index] ?? "").trim();
  };
  const problems: string[] = [];
  const service = serviceCodes.find((code) => code === cell("service").toLowerCase());
  if (!service) {
    const given = cell("service");
    return [
      { line: record.line, message: `${given ? `service "${given}"` : "no service"}: expected ${serviceCodes.join(", ")}` },
    ];
  }
  const network = networkOf(cell, problems);
  const productCode = cell("product_code");
  const amountKobo = amountOf(cell, problems);
  const meterType = cell("meter_type").toLowerCase();
  const clientReference = cell("client_reference");
  const destination = destinationOf(service, cell, problems);
  if ((service === "data" || service === "cable") && !productCode)
    problems.push(`no product_code (a ${service === "data" ? "bundle" : "bouquet"} code)`);
  if (service === "airtime" && !productCode && !network) problems.push("no network (or product_code)");
  if ((service === "electricity" || service === "cable") && !network)
    problems.push(`no ${service === "electricity" ? "disco" : "biller"}`);
  if ((service === "airtime" || service === "electricity") && amountKobo === undefined && !cell("amount"))
    problems.push("no amount (NGN)");
  if (meterType && service !== "electricity") problems.push("meter_type is only for electricity");
  if (meterType && meterType !== "prepaid" && meterType !== "postpaid")
    problems.push(`meter_type "${meterType}": expected prepaid or postpaid`);
  if (clientReference.length > 128) problems.push("client_reference has more than 128 characters");
  const metadata: Record<string, string> = {};
  for (const [key, index] of header.metadata) {
    const value = (record.fields[index] ?? "").trim();
    if (value.length > 500) problems.push(`metadata.${key} has more than 500 characters`);
    if (value) metadata[key] = value;
  }
  if (problems.length > 0) return problems.map((message) => ({ line: record.line, message }));
  const order: BatchOrder = {
    service,
    ...(productCode ? { product_code: productCode } : {}),
    ...(network ? { network } : {}),
    ...destination,
    ...(amountKobo === undefined ? {} : { amount_kobo: amountKobo }),
    ...(meterType ? { meter_type: meterType } : {}),
    ...(clientReference ? { client_reference: clientReference } : {}),
    metadata: { ...metadata, [lineKey]: String(record.line) },
  };
  const needsAirtimeProduct = service === "airtime" && !productCode ? network : undefined;
  return {
    line: record.line,
    clientReference: clientReference || null,
    order,
    ...(needsAirtimeProduct ? { needsAirtimeProduct } : {}),
  };
}

/** The file's orders, or every problem vendctl can see in it (then nothing may be sent). */
export function readOrders(records: CsvRecord[]): { orders: BulkOrder[]; problems: RowProblem[] } {
  const [first, ...rows] = records;
  if (!first) return { orders: [], problems: [{ line: 1, message: "the file is empty: a header row and at least one order" }] };
  const header = readHeader(first);
  if (Array.isArray(header)) return { orders: [], problems: header };
  const orders: BulkOrder[] = [];
  const problems: RowProblem[] = [];
  for (const record of rows) {
    const result = orderOf(record, header);
    if (Array.isArray(result)) problems.push(...result);
    else orders.push(result);
  }
  if (rows.length === 0) problems.push({ line: first.line, message: "no orders after the header row" });
  return { orders, problems };
}
