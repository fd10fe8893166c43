import type { FieldError } from "../errors.ts";

export interface Picked<T> {
  value: T | undefined;
  /** The field the value came from (for error messages). */
  field: string | undefined;
}

/**
 * Resolves aliases to one value: two aliases with different values add an error for each field
 * involved; the same value under several names is fine.
 */
export function pickAlias<T extends string | number>(
  body: Record<string, unknown>,
  names: readonly string[],
  errors: FieldError[],
): Picked<T> {
  const present = names.filter((name) => body[name] !== undefined);
  const [first, ...others] = present;
  if (first === undefined) return { value: undefined, field: undefined };
  const value = body[first] as T;
  const conflicting = others.filter((name) => body[name] !== value);
  if (conflicting.length > 0) {
    for (const name of [first, ...conflicting]) {
      const rest = [first, ...conflicting].filter((n) => n !== name).join(", ");
      errors.push({ field: name, message: `conflicts with ${rest} (aliases must agree)` });
    }
  }
  return { value, field: first };
}

/** A missing value is an error on `canonical` that names the other aliases. */
export function requireAlias<T extends string | number>(
  picked: Picked<T>,
  canonical: string,
  aliases: readonly string[],
  errors: FieldError[],
): picked is { value: T; field: string } {
  if (picked.value !== undefined) return true;
  const others = aliases.filter((a) => a !== canonical);
  errors.push({ field: canonical, message: others.length > 0 ? `is required (or one of: ${others.join(", ")})` : "is required" });
  return false;
}

/** A required text field of a vend request: its canonical name, and all its names in the order they are read. */
export interface AliasedField {
  canonical: string;
  names: readonly string[];
}

/**
 * Reads the text fields in order, then the amount (`amount_kobo` or `amount`), then requires each text field.
 * Every problem is added to `errors`; a field that is missing or not found comes back undefined.
 */
export function readAliased(body: object, fields: readonly AliasedField[], errors: FieldError[]) {
  const raw = body as Record<string, unknown>;
  const picked = fields.map((field) => pickAlias<string>(raw, field.names, errors));
  const amount = pickAlias<number>(raw, ["amount_kobo", "amount"], errors);
  const found = fields.map((field, i) => {
    const value = picked[i] ?? { value: undefined, field: undefined };
    return requireAlias(value, field.canonical, field.names, errors) ? value : undefined;
  });
  return { found, amount };
}
