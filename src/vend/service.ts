import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import { hold } from "../ledger/movements.ts";
import { randomBase62 } from "../lib/random.ts";
import type { ApiPrincipal } from "../lib/scope.ts";
import { formatNgn } from "../lib/shared/money.ts";
import { presentTransaction, type Transaction } from "../processing/present.ts";
import { getWallet } from "../wallet/service.ts";
import type { VendOrder } from "./requests.ts";

const newReference = () => `txn_${randomBase62(24)}`;

/**
 * Accepts a resolved order in ONE guarded statement: the wallet hold (only while the available
 * balance covers the price, so it can never go negative), the `queued` transaction and the
 * hold's ledger entry all happen, or none does. The answer is fully known beforehand (ids and
 * `createdAt`, the database clock), so `beforeHold` can record it first and the wallet row is
 * locked only from this statement to the commit.
 * Throws 402 (with nothing written) when the balance does not cover the price.
 */
export async function acceptVend(
  tx: Executor,
  principal: ApiPrincipal,
  order: VendOrder,
  options: { provider: string; createdAt: Date; beforeHold?: (transaction: Transaction) => Promise<void> },
): Promise<Transaction> {
  const id = randomUUID();
  const reference = newReference();
  const price = order.priceKobo;
  const { provider, createdAt } = options;
  const transaction = presentTransaction({
    id,
    reference,
    accountId: principal.accountId,
    mode: principal.mode,
    status: "queued",
    productCode: order.product.code,
    network: order.product.network,
    service: order.product.service,
    destination: order.destination,
    amountKobo: order.amountKobo,
    priceKobo: price,
    metadata: order.metadata,
    clientReference: order.clientReference,
    provider,
    providerRequestId: null,
    providerReference: null,
    attempts: 0,
    providerSends: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    nextAttemptAt: createdAt,
    failureReason: null,
    createdAt,
    updatedAt: createdAt,
    completedAt: null,
  });
  await options.beforeHold?.(transaction);
  const at = createdAt.toISOString();
  const held = hold({ accountId: principal.accountId, mode: principal.mode }, price, id);
  const [accepted] = await queryRows<{ id: string }>(
    tx,
    sql`with ${held.wallet}, txn as (
          insert into transactions (id, reference, account_id, mode, status, product_code, network, service, destination,
                                    amount_kobo, price_kobo, metadata, client_reference, provider, next_attempt_at, created_at, updated_at)
          select ${id}::uuid, ${reference}, ${principal.accountId}::uuid, ${principal.mode}, 'queued', ${order.product.code},
                 ${order.product.network}, ${order.product.service}, ${order.destination}, ${order.amountKobo}, ${price},
                 ${JSON.stringify(order.metadata)}::jsonb, ${order.clientReference}, ${provider}, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
          from ${held.walletRow}
          returning id
        ), ${held.entry}
        select id from txn`,
  );
  if (!accepted) {
    const wallet = await getWallet(tx, principal);
    throw new AppError(
      "WALLET_INSUFFICIENT_FUNDS",
      `Insufficient wallet balance: available NGN ${formatNgn(wallet.available_kobo)}, required NGN ${formatNgn(price)}`,
    );
  }
  return transaction;
}
