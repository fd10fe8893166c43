import { and, gte, lte, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { type CursorCodec, type KeysetPosition, type Page, pageLimit, toPage } from "../lib/cursor.ts";
import { parseRange } from "../lib/instants.ts";
import type { Executor } from "./transaction.ts";

/**
 * Rows strictly after `position` in `(time desc, id desc)` order; served by the listing indexes. A uuid id
 * is compared as uuid, a text id as it is.
 */
export function afterPosition(time: AnyPgColumn, id: AnyPgColumn, position: KeysetPosition): SQL {
  const at = position.createdAt.toISOString();
  if (id.getSQLType() === "uuid") return sql`(${time}, ${id}) < (${at}::timestamptz, ${position.id}::uuid)`;
  return sql`(${time}, ${id}) < (${at}::timestamptz, ${position.id})`;
}

/**
 * `(time desc, id desc)` spelled as the listing indexes are built (`desc nulls last`):
 * plain `desc` means `nulls first` in PostgreSQL, which would make it sort instead of scanning the index.
 */
export function newestFirst(time: AnyPgColumn, id: AnyPgColumn): SQL[] {
  return [sql`${time} desc nulls last`, sql`${id} desc nulls last`];
}

/** One page of a newest-first listing, and what its cursors are bound to. */
export interface PageRequest {
  cursors: CursorCodec;
  /** The list and whose rows it shows, e.g. `transactions:<account>:<mode>`. */
  scope: string;
  /** The filters as the caller gave them: a cursor only works with the same ones. */
  filters: unknown;
  query: { cursor?: string; limit?: number };
  /** The filters as SQL; undefined entries are left out. */
  conditions: (SQL | undefined)[];
  /**
   * Alternatives (a search over several columns): a row must match the conditions and one of these. Each is
   * read as its own page, so each can use its own index; the page is the newest of their union.
   */
  anyOf?: SQL[];
}

type ListedTable<TimeKey extends string> = PgTable & Record<TimeKey | "id", AnyPgColumn>;

/**
 * One page of `table` newest first by `(table[timeKey], table.id)`: the rows after the request's cursor that
 * match its conditions, `limit + 1` read to learn whether more exist, presented together, and the next
 * cursor bound to the same scope and filters.
 */
export async function readNewestFirst<TimeKey extends string, Table extends ListedTable<TimeKey>, T>(
  db: Executor,
  table: Table,
  timeKey: TimeKey,
  request: PageRequest,
  present: (rows: Table["$inferSelect"][]) => T[] | Promise<T[]>,
): Promise<Page<T>> {
  const time = table[timeKey];
  const { cursors, scope, filters, query } = request;
  const limit = pageLimit(query.limit);
  const conditions = [...request.conditions];
  if (query.cursor) conditions.push(afterPosition(time, table.id, cursors.decode(scope, filters, query.cursor)));
  const where = request.anyOf?.length ? newestOfEach(db, table, time, conditions, request.anyOf, limit + 1) : and(...conditions);
  const rows = await db
    .select()
    .from(table as PgTable)
    .where(where)
    .orderBy(...newestFirst(time, table.id))
    .limit(limit + 1);
  const positioned = rows.map((row) => ({
    row: row as Table["$inferSelect"],
    createdAt: row[timeKey] as Date,
    id: String(row.id),
  }));
  const page = toPage(
    positioned,
    limit,
    (entry) => entry.row,
    (position) => cursors.encode(scope, filters, position),
  );
  return { items: await present(page.items), page: page.page };
}

/**
 * `id` among the newest `count` rows of the union of the alternatives' own newest `count` (each alternative
 * with the conditions): the same rows as one `or`, but no alternative's index is given up for another's, and
 * a row matching several alternatives is there once. The ids are an array, so the rows are read by primary key.
 */
function newestOfEach(
  db: Executor,
  table: PgTable & Record<"id", AnyPgColumn>,
  time: AnyPgColumn,
  conditions: (SQL | undefined)[],
  alternatives: SQL[],
  count: number,
): SQL {
  const pages = alternatives.map(
    (alternative) =>
      sql`(${db
        .select({ id: table.id, at: time })
        .from(table)
        .where(and(...conditions, alternative))
        .orderBy(...newestFirst(time, table.id))
        .limit(count)})`,
  );
  const union = sql.join(pages, sql` union `);
  const order = sql`${sql.identifier(time.name)} desc, id desc`;
  return sql`${table.id} = any(array(select id from (${union}) as candidates order by ${order} limit ${count}))`;
}

/**
 * A listing's `from`/`to` filter on `column` (RFC 3339, both inclusive; `from` after `to` is a 400): its
 * conditions, and the bounds as the cursor is bound to them.
 */
export function withinRange(
  column: AnyPgColumn,
  query: { from?: string; to?: string },
): { conditions: (SQL | undefined)[]; bound: { from?: string; to?: string } } {
  const { from, to } = parseRange(query.from, query.to);
  return {
    conditions: [from ? gte(column, from) : undefined, to ? lte(column, to) : undefined],
    bound: { from: from?.toISOString(), to: to?.toISOString() },
  };
}
