// Shared by the server and the CLI: pure (no database, configuration or feature code).
import { createHmac } from "node:crypto";

const hmacHex = (secret: string, text: string) => createHmac("sha256", secret).update(text).digest("hex");

/** `X-Provider-Signature` without a timestamp: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export function signCallback(secret: string, rawBody: string): string {
  return `sha256=${hmacHex(secret, rawBody)}`;
}

/**
 * `X-Provider-Signature` signed at `t` (unix seconds; default now):
 * `t=<t>,sha256=<hex HMAC-SHA256 of "<t>.<raw body>">`. The exact bytes sent must be the bytes signed.
 */
export function signTimestampedCallback(
  secret: string,
  rawBody: string,
  t: number | string = Math.floor(Date.now() / 1000),
): string {
  return `t=${t},sha256=${hmacHex(secret, `${t}.${rawBody}`)}`;
}
