import { createHmac, timingSafeEqual } from "node:crypto";

/** `sha256=<hex HMAC-SHA256 of the raw body>`, the X-Provider-Signature header value. */
export function signCallback(secret: string, rawBody: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}

export function verifyCallbackSignature(secret: string, rawBody: string, header: string | null): boolean {
  if (!header) return false;
  const expected = Buffer.from(signCallback(secret, rawBody));
  const given = Buffer.from(header.trim());
  return expected.length === given.length && timingSafeEqual(expected, given);
}
