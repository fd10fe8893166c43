import { sql } from "drizzle-orm";
import type { TransactionSql } from "postgres";
import { requestLogsChannel } from "../../db/channels.ts";
import { type Binding, bindingOf } from "../../db/executor.ts";
import { preparedStatement, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const insertLogsStatementName = "request_logs.insert_logs";

/** One record as the statement takes it: redacted, cut and storable already. */
export interface LogInput {
  /** Its place in the batch: ids are given in this order. */
  ord: number;
  /** How long ago the request arrived, in ms: `created_at` is the database's clock less this. */
  age_ms: number;
  request_id: string;
  account_id: string | null;
  mode: string | null;
  key_id: string | null;
  key_prefix: string | null;
  operator: string | null;
  method: string;
  route: string;
  path: string;
  query: string | null;
  status: number;
  error_code: string | null;
  idempotency_key: string | null;
  idempotent_replayed: boolean;
  duration_ms: number;
  client_ip: string | null;
  user_agent: string | null;
  request_body: string | null;
  request_body_truncated: boolean;
  response_body: string | null;
  response_body_truncated: boolean;
}

export interface WrittenLogs {
  written: number;
  /** The batch's highest id, which its notification carries. */
  last_id: string | null;
}

/** The columns written, in the order COPY takes them. */
const columns = [
  "created_at",
  "request_id",
  "account_id",
  "mode",
  "key_id",
  "key_prefix",
  "operator",
  "method",
  "route",
  "path",
  "query",
  "status",
  "error_code",
  "idempotency_key",
  "idempotent_replayed",
  "duration_ms",
  "client_ip",
  "user_agent",
  "request_body",
  "request_body_truncated",
  "response_body",
  "response_body_truncated",
] as const;

/**
 * One writer at a time across processes (a transaction-level advisory lock), so ids are given in the order batches
 * commit and a tail reading `id > last` never skips a batch that commits later with lower ids. The transaction
 * does not wait for the disk at commit (`synchronous_commit` off, for it alone): a crash may lose the last moment's
 * records, never a request.
 */
const serialise = `pg_advisory_xact_lock(hashtextextended('request_logs.insert', 0)) as locked,
  set_config('synchronous_commit', 'off', true) as commit_mode`;

/**
 * The batch in one statement (the embedded engine, which takes no COPY from a client): records travel as one JSON
 * parameter, the text built once and prepared once per connection, the NOTIFY (the last id) sent at commit.
 */
const insertStatement = preparedStatement<{ rows: string }, WrittenLogs>(
  () => sql`${statementLabel(insertLogsStatementName)}with
      serial as (select ${sql.raw(serialise)}),
      written as (
        insert into request_logs (${sql.raw(columns.join(", "))})
        select now() - i.age_ms * interval '1 millisecond', i.request_id, i.account_id, i.mode, i.key_id, i.key_prefix,
          i.operator, i.method, i.route, i.path, i.query, i.status, i.error_code, i.idempotency_key,
          i.idempotent_replayed, i.duration_ms, i.client_ip, i.user_agent, i.request_body, i.request_body_truncated,
          i.response_body, i.response_body_truncated
        from serial, json_to_recordset(${sql.placeholder("rows")}::json) as i(
          ord int, age_ms float8, request_id text, account_id uuid, mode text, key_id uuid, key_prefix text, operator text,
          method text, route text, path text, query text, status smallint, error_code text, idempotency_key text,
          idempotent_replayed boolean, duration_ms real, client_ip text, user_agent text, request_body text,
          request_body_truncated boolean, response_body text, response_body_truncated boolean)
        order by i.ord
        returning id
      )
      select count(*)::int as written, max(id)::text as last_id,
        pg_notify(${sql.raw(`'${requestLogsChannel}'`)}, max(id)::text) as notified
      from written`,
);

const copyEscapes = /[\\\n\r\t]/g;
const needsCopyEscape = /[\\\n\r\t]/;
const copyEscape: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** Text as COPY's text format writes it: `\N` for null, backslashes and line breaks escaped. */
function copyText(value: string | null): string {
  if (value === null) return "\\N";
  return needsCopyEscape.test(value) ? value.replace(copyEscapes, (character) => copyEscape[character] ?? character) : value;
}

/** A value that holds no backslash, tab or line break whatever it is (ids, codes, the route, an address): `\N` or itself. */
const plain = (value: string | null): string => value ?? "\\N";
const flag = (value: boolean): string => (value ? "t" : "f");

/**
 * The batch as COPY's text: one line per record, its values in `columns`' order, `created_at` the database's
 * `now()` less the record's wait.
 */
function copyLines(rows: LogInput[], nowMs: number): string {
  const lines: string[] = [];
  for (const row of rows) {
    lines.push(
      `${new Date(nowMs - row.age_ms).toISOString()}\t${copyText(row.request_id)}\t${plain(row.account_id)}\t${plain(row.mode)}\t` +
        `${plain(row.key_id)}\t${copyText(row.key_prefix)}\t${copyText(row.operator)}\t${copyText(row.method)}\t` +
        `${plain(row.route)}\t${copyText(row.path)}\t${copyText(row.query)}\t${row.status}\t${plain(row.error_code)}\t` +
        `${copyText(row.idempotency_key)}\t${flag(row.idempotent_replayed)}\t${row.duration_ms}\t${copyText(row.client_ip)}\t` +
        `${copyText(row.user_agent)}\t${copyText(row.request_body)}\t${flag(row.request_body_truncated)}\t` +
        `${copyText(row.response_body)}\t${flag(row.response_body_truncated)}\n`,
    );
  }
  return lines.join("");
}

/**
 * On PostgreSQL, the batch by COPY in a transaction of its own (on a connection of its own: no request's statement
 * is queued behind it): half the database's work of the JSON statement for the same rows. Its first statement
 * takes the lock and reads the clock, the last sends the NOTIFY.
 */
async function copyLogs(binding: Binding, rows: LogInput[]): Promise<WrittenLogs> {
  const { prepare } = binding;
  return (await binding.transactions.begin(async (tx: TransactionSql) => {
    const [clock] = await tx.unsafe<{ now_ms: number }[]>(
      `/* ${insertLogsStatementName} */ select ${serialise}, (extract(epoch from now()) * 1000)::float8 as now_ms`,
      [],
      { prepare },
    );
    const stream = await tx
      .unsafe(`/* ${insertLogsStatementName} */ copy request_logs (${columns.join(", ")}) from stdin`)
      .writable();
    await new Promise<void>((resolve, reject) => {
      stream.on("error", reject);
      stream.on("finish", resolve);
      stream.end(copyLines(rows, Number(clock?.now_ms ?? Date.now())));
    });
    const [last] = await tx.unsafe<{ last_id: string }[]>(
      `select currval(pg_get_serial_sequence('request_logs', 'id'))::text as last_id,
        pg_notify($1, currval(pg_get_serial_sequence('request_logs', 'id'))::text) as notified`,
      [requestLogsChannel],
      { prepare },
    );
    return { written: rows.length, last_id: last?.last_id ?? null };
  })) as WrittenLogs;
}

/** Writes `rows` (at least one) and announces them; answers how many were written and the last id. */
export async function insertLogs(db: Executor, rows: LogInput[]): Promise<WrittenLogs> {
  const binding = bindingOf(db);
  if (binding && !("savepoint" in binding.connection)) return copyLogs(binding, rows);
  const [answer] = await insertStatement(db, { rows: JSON.stringify(rows) });
  return { written: Number(answer?.written ?? 0), last_id: answer?.last_id ?? null };
}
