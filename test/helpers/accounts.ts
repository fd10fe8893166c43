import { expect } from "bun:test";
import type { TestServer } from "./server.ts";

let counter = 0;
/** A unique Idempotency-Key per call. */
export const newKey = (prefix = "k") => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
export const idem = (key = newKey()) => ({ headers: { "idempotency-key": key } });

/** A new account whose test wallet holds `kobo`. */
export async function fundedAccount(server: TestServer, kobo: number, name = "funded") {
  const account = await server.createAccount(name);
  const client = server.client(account.testKey);
  if (kobo > 0) {
    const res = await client.post("/api/v1/wallet/fund", { amount_kobo: kobo }, idem());
    if (res.status !== 200) throw new Error(`fund failed: ${res.text}`);
  }
  return { ...account, client };
}

/**
 * A revocation or a grace-0 roll answers once every process refuses the key and records that instant: by the
 * answer, the recorded `revoked_at` or `expires_at` has passed.
 */
export function expectRecordedByAnswer(iso: string | null | undefined): void {
  expect(Date.parse(iso ?? "")).toBeLessThanOrEqual(Date.now());
}
