import type { FieldError } from "../errors.ts";

export interface Picked<T> {
  value: T | undefined;
  /** The field the value came from (for error messages). */
  field: string | undefined;
}

/**
 * Resolves aliases to one value (DECISIONS 9): two aliases with different values add an
 * error for each field involved; the same value under several names is fine.
 */
export function pickAlias<T extends string | number>(
  body: Record<string, unknown>,
  names: string[],
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

export function requireAlias<T extends string | number>(
  picked: Picked<T>,
  canonical: string,
  aliases: string[],
  errors: FieldError[],
): picked is { value: T; field: string } {
  if (picked.value !== undefined) return true;
  const others = aliases.filter((a) => a !== canonical);
  errors.push({ field: canonical, message: others.length > 0 ? `is required (or one of: ${others.join(", ")})` : "is required" });
  return false;
}
