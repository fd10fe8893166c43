import { and, eq, getTableColumns, gt, gte, lt, lte, type SQL, sql } from "drizzle-orm";
import { decodeRow, queryRows, statementLabel } from "../../db/rows.ts";
import { requestLogs } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Mode } from "../../lib/scope.ts";
import type { ListedLogRow } from "../view.ts";

export const listLogsStatementName = "request_logs.list";

/** What a listing or a stream is narrowed to: a key's are its own account and mode, an operator's any of these. */
export interface LogFilters {
  accountId?: string;
  mode?: Mode;
  keyId?: string;
  operator?: string;
  /** One status (`min` = `max`) or a class (`4xx`: 400 to 499). */
  status?: { min: number; max: number };
  method?: string;
  route?: string;
  /** The path starts with this. */
  path?: string;
  errorCode?: string;
  requestId?: string;
  idempotencyKey?: string;
  /** Arrived at or after. */
  from?: Date;
  /** Arrived at or before. */
  to?: Date;
}

/** Which records of those matching, by id. */
export interface LogWindow {
  /** Only records before this one (a page's cursor). */
  beforeId?: number;
  /** Only records after this one (a stream's `Last-Event-ID`, or the last one a stream's reader has read). */
  afterId?: number;
  limit: number;
  /** `newest`: the newest `limit` of the window, newest first; `oldest`: the oldest `limit`, oldest first. */
  order: "newest" | "oldest";
}

/**
 * How long a record may take from its request's arrival (its `created_at`) to its commit: the recorder's
 * flush interval, a flush that waits for the one before it, and the flush itself, each bounded by the
 * statement timeout (15 s by default), with a wide margin. Ids are given in commit order, so within this slack
 * they are in arrival order too; it turns a time range into a range of ids.
 */
const arrivalToCommitSlack = "2 minutes";

const bodyColumns = new Set(["requestBody", "requestBodyTruncated", "responseBody", "responseBodyTruncated"]);
/** Every column but the bodies: a listing never reads them (up to 16 KB each, stored apart). */
const listedColumns = sql.join(
  Object.entries(getTableColumns(requestLogs))
    .filter(([key]) => !bodyColumns.has(key))
    .map(([, column]) => sql.identifier(column.name)),
  sql`, `,
);

/**
 * The smallest id of the records that arrived at or after `at` (`after`: strictly after), were ids in arrival order:
 * a binary search over the primary key, one index probe per step (at most 64, about 25 over 30 million records),
 * the table's next id when none did, null when the table is empty. Rows are read where the probes land, so it
 * costs the same whatever the range holds; the records themselves are then read by id, newest first, in the
 * range. A BRIN scan of `created_at` would read every record of the range (all of them for `to` alone).
 */
function firstIdArrived(at: SQL, comparison: ">=" | ">"): SQL {
  const reached = sql`p.id is null or p.id >= s.hi or p.created_at ${sql.raw(comparison)} ${at}`;
  return sql`(with recursive s(lo, hi) as (
      select min(id), max(id) + 1 from request_logs
      union all
      select case when ${reached} then s.lo else p.id + 1 end,
             case when ${reached} then (s.lo + s.hi) / 2 else s.hi end
      from s left join lateral (
        select id, created_at from request_logs where id >= (s.lo + s.hi) / 2 order by id limit 1
      ) p on true
      where s.lo < s.hi)
    select lo from s where lo >= hi)`;
}

/** The filters as conditions on request_logs. */
function conditionsOf(filters: LogFilters): SQL[] {
  const t = requestLogs;
  const { status, from, to } = filters;
  const conditions: (SQL | undefined)[] = [
    filters.accountId === undefined ? undefined : eq(t.accountId, filters.accountId),
    filters.mode === undefined ? undefined : eq(t.mode, filters.mode),
    filters.keyId === undefined ? undefined : eq(t.keyId, filters.keyId),
    filters.operator === undefined ? undefined : eq(t.operator, filters.operator),
    status === undefined
      ? undefined
      : status.min === status.max
        ? eq(t.status, status.min)
        : sql`${t.status} between ${status.min} and ${status.max}`,
    filters.method === undefined ? undefined : eq(t.method, filters.method),
    filters.route === undefined ? undefined : eq(t.route, filters.route),
    // A prefix as itself, not a LIKE pattern: `%` and `_` in a path are plain characters.
    filters.path === undefined ? undefined : sql`starts_with(${t.path}, ${filters.path})`,
    filters.errorCode === undefined ? undefined : eq(t.errorCode, filters.errorCode),
    filters.requestId === undefined ? undefined : eq(t.requestId, filters.requestId),
    filters.idempotencyKey === undefined ? undefined : eq(t.idempotencyKey, filters.idempotencyKey),
    from === undefined ? undefined : gte(t.createdAt, from),
    to === undefined ? undefined : lte(t.createdAt, to),
    from === undefined
      ? undefined
      : sql`${t.id} >= ${firstIdArrived(sql`${from.toISOString()}::timestamptz - interval '${sql.raw(arrivalToCommitSlack)}'`, ">=")}`,
    to === undefined
      ? undefined
      : sql`${t.id} < ${firstIdArrived(sql`${to.toISOString()}::timestamptz + interval '${sql.raw(arrivalToCommitSlack)}'`, ">")}`,
  ];
  return conditions.filter((condition): condition is SQL => condition !== undefined);
}

/**
 * The statement reading request logs that match `filters` in `window`, without their bodies. Which index serves
 * it: a key's own records (account and mode) the scope index, newest first; a request id its index; a time range
 * the primary key between the ids that range spans (`firstIdArrived`); every other filter (status, method, route,
 * path, error code, idempotency key, key, operator) has no index of its own, as every request writes a row: the
 * records are read in id order and those filters checked on the way, until the page is full.
 */
export function listLogsQuery(filters: LogFilters, window: LogWindow): SQL {
  const conditions = conditionsOf(filters);
  if (window.beforeId !== undefined) conditions.push(lt(requestLogs.id, window.beforeId));
  if (window.afterId !== undefined) conditions.push(gt(requestLogs.id, window.afterId));
  // The same order either way (ids are never null), spelled as the index that serves it: the scope index is
  // built `id desc nulls last`, the primary key read backwards is `id desc` (nulls first).
  const scoped = filters.accountId !== undefined && filters.mode !== undefined;
  const order =
    window.order === "oldest"
      ? sql`${requestLogs.id}`
      : scoped
        ? sql`${requestLogs.id} desc nulls last`
        : sql`${requestLogs.id} desc`;
  const where = conditions.length > 0 ? sql`where ${and(...conditions)}` : sql``;
  return sql`${statementLabel(listLogsStatementName)}select ${listedColumns} from request_logs ${where}
      order by ${order} limit ${window.limit}`;
}

/** Request logs matching `filters` in `window`, without their bodies (see `listLogsQuery`). */
export async function listLogRows(db: Executor, filters: LogFilters, window: LogWindow): Promise<ListedLogRow[]> {
  const rows = await queryRows<Record<string, unknown>>(db, listLogsQuery(filters, window));
  return rows.map((row) => decodeRow(requestLogs, row) as ListedLogRow);
}

/** Whether a record matches `filters`: the conditions of `listLogRows`, checked in memory (a stream's records). */
export function matchesLogFilters(filters: LogFilters, row: ListedLogRow): boolean {
  const { status, from, to } = filters;
  return (
    (filters.accountId === undefined || row.accountId === filters.accountId) &&
    (filters.mode === undefined || row.mode === filters.mode) &&
    (filters.keyId === undefined || row.keyId === filters.keyId) &&
    (filters.operator === undefined || row.operator === filters.operator) &&
    (status === undefined || (row.status >= status.min && row.status <= status.max)) &&
    (filters.method === undefined || row.method === filters.method) &&
    (filters.route === undefined || row.route === filters.route) &&
    (filters.path === undefined || row.path.startsWith(filters.path)) &&
    (filters.errorCode === undefined || row.errorCode === filters.errorCode) &&
    (filters.requestId === undefined || row.requestId === filters.requestId) &&
    (filters.idempotencyKey === undefined || row.idempotencyKey === filters.idempotencyKey) &&
    (from === undefined || row.createdAt >= from) &&
    (to === undefined || row.createdAt <= to)
  );
}
