import { createHash, timingSafeEqual } from "node:crypto";

const bearerPattern = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerOf(authorization: string | null | undefined): string | undefined {
  return bearerPattern.exec(authorization ?? "")?.[1];
}

/** SHA-256 in hex: how API keys and operator tokens are stored and looked up. */
export function sha256Hex(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether a given secret equals the expected one, in the same time whatever either holds (their lengths too). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
