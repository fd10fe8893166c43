/**
 * The anchor's accept: the 3-statement transaction (guarded wallet update, insert transaction, insert
 * ledger entry) between BEGIN and COMMIT, on its own tables in schema `bare`. Used by the bare Elysia
 * server and by the driver-only baseline, so both run exactly the same SQL.
 */
import { randomUUID } from "node:crypto";
import type postgres from "postgres";

export const bareWalletCount = 1_000;
export const barePriceKobo = 9_700;

export async function createBareTables(sql: postgres.Sql, wallets = bareWalletCount): Promise<void> {
  await sql.unsafe(`
    create schema if not exists bare;
    create table if not exists bare.wallets (
      id integer primary key,
      balance bigint not null,
      held bigint not null default 0,
      updated_at timestamptz not null default now()
    );
    create table if not exists bare.transactions (
      id uuid primary key,
      reference text not null unique,
      wallet_id integer not null references bare.wallets (id),
      status text not null,
      product_code text not null,
      destination text not null,
      amount bigint not null,
      price bigint not null,
      created_at timestamptz not null default now()
    );
    create table if not exists bare.ledger_entries (
      id bigint generated always as identity primary key,
      wallet_id integer not null references bare.wallets (id),
      transaction_id uuid not null references bare.transactions (id),
      kind text not null,
      amount bigint not null,
      created_at timestamptz not null default now()
    );
    insert into bare.wallets (id, balance) select g, 100000000000000 from generate_series(1, ${wallets}) g
      on conflict (id) do nothing;`);
}

/** One accept; false (and nothing written) when the wallet cannot cover the price. */
export function bareAccept(sql: postgres.Sql, walletId: number, amount: number, destination: string): Promise<boolean> {
  const id = randomUUID();
  return sql.begin(async (tx) => {
    const held = await tx`update bare.wallets set held = held + ${barePriceKobo}, updated_at = now()
      where id = ${walletId} and balance - held >= ${barePriceKobo} returning id`;
    if (held.length === 0) return false;
    await tx`insert into bare.transactions (id, reference, wallet_id, status, product_code, destination, amount, price)
      values (${id}, ${`txn_${id.replaceAll("-", "")}`}, ${walletId}, 'queued', 'mtn-airtime', ${destination}, ${amount}, ${barePriceKobo})`;
    await tx`insert into bare.ledger_entries (wallet_id, transaction_id, kind, amount)
      values (${walletId}, ${id}, 'hold', ${barePriceKobo})`;
    return true;
  });
}
