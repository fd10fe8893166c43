import type { Config } from "../config.ts";
import { readSettings } from "./start-up.ts";

/** Setting names that hold a secret: their values are never printed. */
const secretName = /token|secret|password|passphrase|api_?key|credential|private/i;

/** A URL's password (a PostgreSQL URL's, a webhook's) replaced, the rest kept. */
function withoutPassword(value: string): string {
  try {
    const url = new URL(value);
    if (!url.password) return value;
    url.password = "redacted";
    return url.toString();
  } catch {
    return value;
  }
}

/** The settings as JSON-ready data, every secret redacted: the ones named so, and the passwords inside URLs. */
export function redactedSettings(value: unknown, name = ""): unknown {
  if (value === undefined || value === null) return value ?? null;
  if (secretName.test(name) && typeof value !== "object") return "[redacted]";
  if (Array.isArray(value)) return value.map((item) => redactedSettings(item, name));
  if (value instanceof Map) return redactedSettings(Object.fromEntries(value), name);
  if (value instanceof Set) return redactedSettings([...value], name);
  if (typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactedSettings(inner, key)]));
  if (typeof value === "string") return withoutPassword(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "function") return undefined;
  return value;
}

/**
 * `vend config`: reads the environment as `vend serve` and `vend work` would, and prints the effective
 * settings (defaults filled in) as JSON with secrets redacted. A bad value: its one-line reason and exit 2.
 */
export function showConfig(): void {
  const config: Config = readSettings(2);
  console.log(JSON.stringify(redactedSettings(config), null, 2));
}
