import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { ApiPrincipal } from "../auth/service.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import { formatNgn } from "../lib/numbers.ts";
import { randomBase62 } from "../lib/random.ts";
import { presentTransaction, type Transaction } from "../transactions/present.ts";
import { getWallet } from "../wallet/service.ts";
import type { VendOrder } from "./requests.ts";

export const newReference = () => `txn_${randomBase62(24)}`;

/**
 * The provider that will carry a vend. Test mode always uses the built-in sandbox; live
 * mode has no provider configured yet, so it has no route.
 */
export function routeFor(mode: ApiPrincipal["mode"]): string {
  if (mode === "test") return "sandbox";
  throw new AppError("NO_ROUTE", "No provider route is configured for live vends; nothing was created or charged");
}

/**
 * Accepts a resolved order in ONE guarded statement: the wallet hold (only while the available
 * balance covers the price, so it can never go negative), the `queued` transaction and the
 * hold's ledger entry all happen, or none does. Keeping it to one statement also keeps the
 * wallet row locked for as short a time as possible under concurrent vends.
 * Throws 402 (with nothing written) when the balance does not cover the price.
 */
export async function acceptVend(
  tx: Executor,
  principal: ApiPrincipal,
  order: VendOrder,
  provider: string,
): Promise<Transaction> {
  const id = randomUUID();
  const reference = newReference();
  const price = order.priceKobo;
  const [accepted] = await queryRows<{ created_ms: number }>(
    tx,
    sql`with held as (
          update wallets set held_kobo = held_kobo + ${price}, updated_at = now()
          where account_id = ${principal.accountId} and mode = ${principal.mode} and balance_kobo - held_kobo >= ${price}
          returning id, balance_kobo, held_kobo
        ), txn as (
          insert into transactions (id, reference, account_id, mode, status, product_code, network, service, destination,
                                    amount_kobo, price_kobo, metadata, client_reference, provider, next_attempt_at)
          select ${id}::uuid, ${reference}, ${principal.accountId}::uuid, ${principal.mode}, 'queued', ${order.product.code},
                 ${order.product.network}, ${order.product.service}, ${order.destination}, ${order.amountKobo}, ${price},
                 ${JSON.stringify(order.metadata)}::jsonb, ${order.clientReference}, ${provider}, now()
          from held
          returning created_at
        ), entry as (
          insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo,
                                      balance_after_kobo, held_after_kobo, transaction_id)
          select held.id, 'hold', ${price}, 0, ${price}, held.balance_kobo, held.held_kobo, ${id}::uuid
          from held where ${price} > 0
        )
        select (extract(epoch from created_at) * 1000)::float8 as created_ms from txn`,
  );
  if (!accepted) {
    const wallet = await getWallet(tx, principal);
    throw new AppError(
      "WALLET_INSUFFICIENT_FUNDS",
      `Insufficient wallet balance: available NGN ${formatNgn(wallet.available_kobo)}, required NGN ${formatNgn(price)}`,
    );
  }
  const createdAt = new Date(Math.round(Number(accepted.created_ms)));
  return presentTransaction({
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
    providerReference: null,
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    nextAttemptAt: createdAt,
    failureReason: null,
    createdAt,
    updatedAt: createdAt,
    completedAt: null,
  });
}
