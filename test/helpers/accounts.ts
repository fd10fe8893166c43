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
