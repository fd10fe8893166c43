import { InsufficientFundsError, type Transaction, type VendClient } from "@vend/sdk";

/** Tops up the test wallet (test keys only); returns the available balance in kobo. */
export async function fundTestWallet(vend: VendClient, amountKobo: number): Promise<number> {
  const funded = await vend.wallet.fund({ amount_kobo: amountKobo });
  return funded.wallet.available_kobo;
}

/**
 * Buys airtime and waits up to 20 s for the outcome. The SDK sends an Idempotency-Key and retries with it, so a
 * lost answer never charges twice; pass your order id as `client_reference` to find the order again.
 */
export async function buyAirtime(vend: VendClient, phone: string, amountKobo: number, orderId: string): Promise<Transaction> {
  try {
    return await vend.vends.create(
      { product_code: "mtn-airtime", phone_number: phone, amount_kobo: amountKobo, client_reference: orderId },
      { wait: 20 },
    );
  } catch (error) {
    if (error instanceof InsufficientFundsError) console.error(`Top up the wallet first (request ${error.requestId})`);
    throw error;
  }
}

/** Up to `max` failed transactions, newest first, following pages as needed. */
export async function recentFailures(vend: VendClient, max: number): Promise<Transaction[]> {
  const failed: Transaction[] = [];
  for await (const transaction of vend.transactions.list({ status: "failed", limit: 100 })) {
    failed.push(transaction);
    if (failed.length >= max) break;
  }
  return failed;
}
