/**
 * Reading providers' JSON answers: plain-object checks, text fields, and the electricity values (token,
 * units, receipt) that every Nigerian VTU provider spells its own way.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A non-empty string or a finite number, as text. */
export function readText(source: Record<string, unknown>, key: string): string | undefined {
  const value = source[key];
  if (typeof value === "string") return value.trim() || undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function firstText(source: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = readText(source, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

// Discos label tokens inconsistently: "Token : 1234-5678-...", "TOKEN: 1234 5678 ...", or the bare digits.
function tokenFrom(text: string): string | undefined {
  const labelled = /token\s*(?:no\.?|number)?\s*[:=-]?\s*(\d[\d -]{8,}\d)/i.exec(text);
  if (labelled?.[1]) return labelled[1].trim();
  return /^\d[\d -]{8,}\d$/.test(text) ? text : undefined;
}

// "Units: 12.5kWh", "Token : 4216... : 22.2 kWh" → "12.5" / "22.2"; a bare number only in a units field.
function unitsFrom(text: string, bare: boolean): string | undefined {
  const match = /units?\s*[:=]?\s*(\d+(?:\.\d+)?)/i.exec(text) ?? /(\d+(?:\.\d+)?)\s*kwh/i.exec(text);
  if (match?.[1]) return match[1];
  return bare && /^\d+(?:\.\d+)?$/.test(text) ? text : undefined;
}

function fitting(value: string | undefined, maxLength: number): string | undefined {
  return value !== undefined && value.length <= maxLength ? value : undefined;
}

/**
 * Electricity values from a delivered answer, for the transaction's metadata: `token`, `units` ("12.5 kWh",
 * as the test-mode provider writes them) and `receipt_number`. Explicit fields win over what `purchased_code` spells out.
 * Values too long for the callback format are left out rather than cut.
 */
export function readElectricityResult(answer: Record<string, unknown>): Record<string, string> | undefined {
  const purchased = readText(answer, "purchased_code") ?? "";
  const tokenField = firstText(answer, ["token", "Token", "mainToken"]);
  const unitsField = firstText(answer, ["units", "Units", "mainTokenUnits"]);
  const token = fitting(tokenField ? (tokenFrom(tokenField) ?? tokenField) : tokenFrom(purchased), 128);
  const kwh = unitsField ? unitsFrom(unitsField, true) : unitsFrom(purchased, false);
  const units = fitting(kwh ? `${kwh} kWh` : unitsField, 32);
  const receipt = fitting(
    firstText(answer, ["receipt_number", "receiptNumber", "ReceiptNumber", "receipt", "exchangeReference"]),
    64,
  );
  const result: Record<string, string> = {};
  if (token) result.token = token;
  if (units) result.units = units;
  if (receipt) result.receipt_number = receipt;
  return Object.keys(result).length > 0 ? result : undefined;
}
