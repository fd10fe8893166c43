import type postgres from "postgres";

/**
 * Even rows belong to the listed account's test mode, odd rows to every other account (both modes), all
 * interleaved in time, 3 s apart. About 100,000 distinct phone numbers (so a number has a handful of rows per
 * account), meters and smartcards for a quarter; statuses, services and client references as in production.
 */
const statement = `
  insert into transactions (reference, account_id, mode, status, product_code, network, service, destination,
    amount_kobo, price_kobo, metadata, client_reference, provider, created_at, updated_at, completed_at)
  select 'txn_' || substr(md5(g::text), 1, 24),
    case when g % 2 = 0 then $1::uuid else others[1 + (g / 2) % cardinality(others)] end,
    case when g % 2 = 0 or g % 4 = 1 then 'test' else 'live' end,
    s.status, s.network || '-' || s.service, s.network, s.service,
    case when s.service in ('airtime', 'data')
      then (array['0803','0806','0813','0703','0810','0901','0805','0708'])[1 + k % 8] || lpad((k * 73 % 10000000)::text, 7, '0')
      when s.service = 'electricity' then '45' || lpad((k * 7907 % 1000000000)::text, 9, '0')
      else '70' || lpad((k * 7907 % 100000000)::text, 8, '0') end,
    10000, 9700, '{"route":"sandbox"}'::jsonb,
    case when g % 3 = 0 then null else 'inv-' || lpad(g::text, 8, '0') end,
    'sandbox', at, at, case when s.status in ('successful', 'failed', 'reversed', 'refunded') then at + interval '4 seconds' end
  from generate_series(1, $2::int) g
  cross join lateral (select (g::bigint * 7919) % 100000 as k, g / 2 as u, now() - g * interval '3 seconds' as at,
                             (select array_agg(id order by id) from accounts where id <> $1::uuid) as others) v
  cross join lateral (select
    case when u % 100 < 80 then 'successful' when u % 100 < 92 then 'failed' when u % 100 < 95 then 'pending'
         when u % 100 < 97 then 'queued' when u % 100 < 98 then 'processing' when u % 100 < 99 then 'reversed'
         else 'refunded' end as status,
    case when u % 20 < 10 then 'airtime' when u % 20 < 16 then 'data' when u % 20 < 19 then 'electricity'
         else 'cable' end as service,
    case when u % 20 < 16 then (array['mtn','airtel','glo','9mobile'])[1 + (u / 20) % 4]
         when u % 20 < 19 then (array['ikedc','ekedc','aedc','phed'])[1 + (u / 20) % 4]
         else (array['dstv','gotv'])[1 + (u / 20) % 2] end as network) s`;

/**
 * `count` transactions in one statement: every other one in `accountId`'s test mode, the rest spread over the
 * other accounts of the database (at least one must exist), newest first from now, 3 s apart.
 */
export async function insertBulkTransactions(sql: postgres.Sql, accountId: string, count: number): Promise<void> {
  await sql.unsafe(statement, [accountId, count]);
}

/**
 * insertBulkTransactions with the table's indexes (all but the primary key) dropped during the load and built
 * after it, as the migrations define them: far faster than maintaining them row by row.
 */
export async function insertBulkTransactionsUnindexed(sql: postgres.Sql, accountId: string, rows: number): Promise<void> {
  const indexes = await sql<{ name: string; definition: string }[]>`
    select indexname as name, indexdef as definition from pg_indexes
    where tablename = 'transactions' and indexname not in (select conname from pg_constraint where contype = 'p')`;
  for (const index of indexes) await sql.unsafe(`drop index ${index.name}`);
  await sql.unsafe("set maintenance_work_mem = '256MB'");
  await insertBulkTransactions(sql, accountId, rows);
  // A partitioned table's index is defined `ON ONLY` the parent; built on the parent it is built on every partition.
  for (const index of indexes) await sql.unsafe(index.definition.replace(" ON ONLY ", " ON "));
}
