import { sql } from "drizzle-orm";
import type { Sql, TransactionSql } from "postgres";
import { queryRows } from "./rows.ts";
import { type Executor, withTransaction } from "./transaction.ts";

/**
 * Monthly range partitions of the history (issue 25): the tables migration 0012 made ready (their primary keys
 * and uniqueness include `created_at`, nothing holds a foreign key to them). `partitionHistory` converts them,
 * once, on an operator's command (`vend partition`); `createPartitionsAhead`, a task of the runner,
 * keeps next months' partitions made. Unpartitioned databases (the default install, PGlite) are left alone.
 */
export const partitionedTables = ["transactions", "ledger_entries", "events"] as const;
export type PartitionedTable = (typeof partitionedTables)[number];

/** The column every partitioned table is ranged on. */
export const partitionColumn = "created_at";

/** Months made ahead of the current one, by the conversion and by the task. */
export const defaultMonthsAhead = 3;

/** The first instant (UTC) of the month `offset` months after the one `date` is in. */
export const monthStart = (date: Date, offset = 0): Date =>
  new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1));

/** `transactions_y2026m01`: the partition of `table` for the month starting at `start`. */
export const partitionName = (table: PartitionedTable, start: Date): string =>
  `${table}_y${start.getUTCFullYear()}m${String(start.getUTCMonth() + 1).padStart(2, "0")}`;

const months = (first: Date, last: Date): Date[] => {
  const list: Date[] = [];
  for (let month = monthStart(first); month <= last; month = monthStart(month, 1)) list.push(month);
  return list;
};

/**
 * Each partition's storage parameters: those migration 0014 gives the unpartitioned table (room on each page for
 * HOT updates, autovacuum after a small fraction changed), which a partitioned parent cannot hold itself.
 */
const partitionStorage: Record<PartitionedTable, string> = {
  transactions:
    "fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, " +
    "autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 1",
  ledger_entries: "autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02",
  events: "autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02",
};

/** The statement that makes `table`'s partition of the month starting at `start` (under `parent`), unless it exists. */
export const createPartition = (table: PartitionedTable, start: Date, parent: string = table): string =>
  `create table if not exists "${partitionName(table, start)}" partition of "${parent}"
   for values from ('${start.toISOString()}') to ('${monthStart(start, 1).toISOString()}') with (${partitionStorage[table]})`;

/** The tables of `partitionedTables` that are partitioned now (none on an unpartitioned database). */
export async function partitionedNow(db: Executor): Promise<PartitionedTable[]> {
  const rows = await queryRows<{ name: PartitionedTable }>(
    db,
    sql`select c.relname as name from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
        where c.relnamespace = 'public'::regnamespace and c.relname in ('transactions', 'ledger_entries', 'events')`,
  );
  return rows.map((row) => row.name);
}

/**
 * Makes the partitions of the current month and the `monthsAhead` after it that are missing, for each table
 * that is partitioned; returns how many it made. Nothing to do (the usual case, or an unpartitioned
 * database) costs one catalogue query and takes no lock.
 */
export async function createPartitionsAhead(db: Executor, monthsAhead = defaultMonthsAhead, now = new Date()): Promise<number> {
  const tables = await partitionedNow(db);
  const wanted = tables.flatMap((table) =>
    months(now, monthStart(now, monthsAhead)).map((start) => ({ table, start, name: partitionName(table, start) })),
  );
  if (wanted.length === 0) return 0;
  const present = await queryRows<{ name: string }>(
    db,
    sql`select relname as name from pg_class
        where relnamespace = 'public'::regnamespace and relname in ${wanted.map((w) => w.name)}`,
  );
  const missing = wanted.filter((w) => !present.some((p) => p.name === w.name));
  // Each in its own statement: making a partition locks its parent briefly; the lock timeout keeps the hot path moving.
  for (const { table, start } of missing)
    await withTransaction(db, async (tx) => {
      await tx.execute(sql.raw(`set local lock_timeout = '5s'`));
      await tx.execute(sql.raw(createPartition(table, start)));
    });
  return missing.length;
}

/** What one conversion did per table: `converted` (with its rows and partitions) or `already` partitioned. */
export interface PartitionOutcome {
  table: PartitionedTable;
  outcome: "converted" | "already";
  rows: number;
  partitions: number;
}

/**
 * Converts `transactions`, `ledger_entries` and `events` into tables range-partitioned by month on
 * `created_at`, in ONE transaction holding an exclusive lock on the three (the service waits, then goes on
 * with the new tables): for each, a partitioned copy with the same columns, defaults, checks and indexes (under
 * their names), a partition per month from its oldest row to `monthsAhead` months ahead, the rows copied, its
 * sequences and foreign keys moved over, and the names swapped. A table already partitioned is left as it is,
 * so a second run changes nothing (but missing future partitions). PostgreSQL only.
 */
export async function partitionHistory(
  client: Sql,
  monthsAhead = defaultMonthsAhead,
  now = new Date(),
): Promise<PartitionOutcome[]> {
  const outcomes = await client.begin(async (tx) => {
    await tx.unsafe(`lock table ${partitionedTables.join(", ")} in access exclusive mode`);
    const done: PartitionOutcome[] = [];
    for (const table of partitionedTables) done.push(await convertTable(tx, table, monthsAhead, now));
    return done;
  });
  for (const outcome of outcomes) if (outcome.outcome === "converted") await client.unsafe(`analyze "${outcome.table}"`);
  return outcomes;
}

async function convertTable(
  tx: TransactionSql,
  table: PartitionedTable,
  monthsAhead: number,
  now: Date,
): Promise<PartitionOutcome> {
  const [kind] = await tx<{ relkind: string }[]>`select relkind from pg_class where oid = ${`public.${table}`}::regclass`;
  if (kind?.relkind === "p") {
    for (const start of months(now, monthStart(now, monthsAhead))) await tx.unsafe(createPartition(table, start));
    return { table, outcome: "already", rows: 0, partitions: 0 };
  }
  const triggers = await tx`select tgname from pg_trigger where tgrelid = ${table}::regclass and not tgisinternal`;
  if (triggers.length > 0) throw new Error(`${table} has triggers (${triggers.map((t) => t.tgname).join(", ")}): not converted`);
  const [span] = await tx<{ oldest: Date | null; newest: Date | null; rows: string }[]>`
    select min(created_at) as oldest, max(created_at) as newest, count(*) as rows from ${tx(table)}`;
  const indexes = await tx<{ name: string; definition: string; constraint: string | null }[]>`
    select i.relname as name, pg_get_indexdef(i.oid) as definition, c.conname as constraint
    from pg_index x join pg_class i on i.oid = x.indexrelid
    left join pg_constraint c on c.conindid = i.oid and c.conrelid = x.indrelid
    where x.indrelid = ${table}::regclass`;
  const foreignKeys = await tx<{ name: string; definition: string }[]>`
    select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
    where conrelid = ${table}::regclass and contype = 'f'`;
  const sequences = await tx<{ sequence: string; column: string }[]>`
    select s.relname as sequence, a.attname as column from pg_depend d
    join pg_class s on s.oid = d.objid and s.relkind = 'S'
    join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
    where d.refobjid = ${table}::regclass and d.deptype in ('a', 'i')`;

  const staging = `${table}__partitioned`;
  await tx.unsafe(`create table "${staging}" (like "${table}" including all) partition by range (${partitionColumn})`);
  const first = span?.oldest && span.oldest < now ? span.oldest : now;
  const newest = span?.newest && span.newest > monthStart(now, monthsAhead) ? span.newest : monthStart(now, monthsAhead);
  const spanned = months(first, newest);
  for (const start of spanned) await tx.unsafe(createPartition(table, start, staging));
  await tx.unsafe(`insert into "${staging}" select * from "${table}"`);
  for (const { sequence, column } of sequences) await tx.unsafe(`alter sequence "${sequence}" owned by "${staging}"."${column}"`);

  // The copy's indexes have names of their own: give each the name of the original with the same definition.
  const copied = await tx<{ name: string; definition: string; constraint: string | null }[]>`
    select i.relname as name, pg_get_indexdef(i.oid) as definition, c.conname as constraint
    from pg_index x join pg_class i on i.oid = x.indexrelid
    left join pg_constraint c on c.conindid = i.oid and c.conrelid = x.indrelid
    where x.indrelid = ${staging}::regclass`;
  const shape = (definition: string) => definition.replace(/^.* USING /, "");
  await tx.unsafe(`drop table "${table}"`);
  await tx.unsafe(`alter table "${staging}" rename to "${table}"`);
  for (const original of indexes) {
    const copy = copied.find(
      (c) => shape(c.definition) === shape(original.definition) && (c.constraint === null) === (original.constraint === null),
    );
    if (!copy) throw new Error(`${table}: no copy of index ${original.name}`);
    copied.splice(copied.indexOf(copy), 1);
    if (copy.constraint && original.constraint)
      await tx.unsafe(`alter table "${table}" rename constraint "${copy.constraint}" to "${original.constraint}"`);
    else await tx.unsafe(`alter index "${copy.name}" rename to "${original.name}"`);
  }
  for (const key of foreignKeys) await tx.unsafe(`alter table "${table}" add constraint "${key.name}" ${key.definition}`);
  return { table, outcome: "converted", rows: Number(span?.rows ?? 0), partitions: spanned.length };
}
