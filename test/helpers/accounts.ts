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
 * Waits until a recorded `revoked_at` or `expires_at` has come: a revocation or a grace-0 roll takes effect
 * KEY_PROPAGATION_MS after the call, on every process at once, and that instant is what is recorded.
 */
export async function untilRecorded(iso: string | null | undefined): Promise<void> {
  const at = Date.parse(iso ?? "");
  if (Number.isFinite(at)) await Bun.sleep(Math.max(0, at - Date.now() + 1));
}
