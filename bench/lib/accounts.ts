import type { Target } from "./load.ts";

/** The ADMIN_TOKEN the benches give the API process, to create accounts over HTTP. */
export const benchAdminToken = "bench-admin-token-0123456789abcdef";

/** An airtime vend the sandbox completes at once (price 9,700 kobo after the default discount). */
export const vendBody = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });

async function post(url: string, headers: Record<string, string>, body: unknown, expected: number): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Funds the test wallet of `key` with `kobo` (in steps of at most the largest allowed funding). */
export async function fundTestWallet(base: string, key: string, kobo: number): Promise<void> {
  for (let left = kobo, step = 0; left > 0; step++) {
    const amount = Math.min(left, 100_000_000_000);
    await post(
      `${base}/api/v1/wallet/fund`,
      { authorization: `Bearer ${key}`, "idempotency-key": `bench-fund-${key.slice(-8)}-${step}` },
      { amount_kobo: amount },
      200,
    );
    left -= amount;
  }
}

/** `count` new accounts (admin API), each with its test wallet funded; returns their test keys. */
export async function fundedAccounts(base: string, count: number, kobo: number): Promise<string[]> {
  const keys: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        const i = next++;
        const created = (await post(
          `${base}/admin/v1/accounts`,
          { authorization: `Bearer ${benchAdminToken}` },
          { name: `bench-${i}` },
          201,
        )) as { data: { keys: { mode: string; key: string }[] } };
        const key = created.data.keys.find((k) => k.mode === "test")?.key;
        if (!key) throw new Error("account created without a test key");
        await fundTestWallet(base, key, kobo);
        keys.push(key);
      }
    }),
  );
  return keys;
}

/** One target per key: POST /api/v1/vend of `vendBody` with that key. */
export function vendTargets(base: string, keys: string[]): Target[] {
  return keys.map((key) => ({
    url: `${base}/api/v1/vend`,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: vendBody,
  }));
}
