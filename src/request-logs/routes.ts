import type { AppDeps } from "../deps.ts";
import { AppError, notFound } from "../errors.ts";
import { contextOf } from "../http/context.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { clientOf } from "../http/pipeline/authenticate.ts";
import type { Outcome } from "../http/pipeline/result.ts";
import type { OperationSpec } from "../http/spec.ts";
import { type Page, pageLimit, toPage } from "../lib/cursor.ts";
import { parseRange } from "../lib/instants.ts";
import type { Mode, Scope } from "../lib/scope.ts";
import { findLogRow } from "./statements/find-log.ts";
import { type LogFilters, listLogRows } from "./statements/list-logs.ts";
import { presentRequestLog, presentRequestLogDetail, type RequestLog } from "./view.ts";

/** What the request-log routes use. */
export type RequestLogRouteDeps = Pick<AppDeps, "authenticate" | "cursors" | "db" | "reads" | "requestLogStreams">;

/** The filters a key may give (its account and mode are its own). */
interface ClientQuery {
  status?: string;
  method?: string;
  route?: string;
  path?: string;
  error_code?: string;
  request_id?: string;
  idempotency_key?: string;
  from?: string;
  to?: string;
}

/** The filters an operator may give besides. */
interface AdminQuery extends ClientQuery {
  account_id?: string;
  key_id?: string;
  mode?: Mode;
  operator?: string;
}

type Paged = { cursor?: string; limit?: number };

/** `402` as itself, `4xx` as 400 to 499 (the contract's pattern has checked the spelling). */
function statusRange(status: string | undefined): LogFilters["status"] {
  if (status === undefined) return undefined;
  if (status.endsWith("xx")) {
    const min = Number(status[0]) * 100;
    return { min, max: min + 99 };
  }
  return { min: Number(status), max: Number(status) };
}

/** The query as filters, and as the canonical values a cursor is bound to (one spelling of a uuid and an instant). */
function filtersOf(query: AdminQuery): { filters: LogFilters; bound: Record<string, string | undefined> } {
  const { from, to } = parseRange(query.from, query.to);
  const accountId = query.account_id?.toLowerCase();
  const keyId = query.key_id?.toLowerCase();
  const filters: LogFilters = {
    accountId,
    mode: query.mode,
    keyId,
    operator: query.operator,
    status: statusRange(query.status),
    method: query.method,
    route: query.route,
    path: query.path,
    errorCode: query.error_code,
    requestId: query.request_id,
    idempotencyKey: query.idempotency_key,
    from,
    to,
  };
  const bound = {
    ...query,
    account_id: accountId,
    key_id: keyId,
    from: from?.toISOString(),
    to: to?.toISOString(),
    cursor: undefined,
    limit: undefined,
  };
  return { filters, bound };
}

/** A key's filters: its own account and mode, whatever else it asks. */
function clientFiltersOf(scope: Scope, query: ClientQuery) {
  const { filters, bound } = filtersOf({
    status: query.status,
    method: query.method,
    route: query.route,
    path: query.path,
    error_code: query.error_code,
    request_id: query.request_id,
    idempotency_key: query.idempotency_key,
    from: query.from,
    to: query.to,
  });
  return { filters: { ...filters, accountId: scope.accountId, mode: scope.mode }, bound };
}

/** One page newest first by id, as the transaction list pages: a signed cursor bound to the list and its filters. */
async function readPage(
  deps: Pick<AppDeps, "cursors">,
  db: AppDeps["db"],
  list: string,
  found: { filters: LogFilters; bound: Record<string, string | undefined> },
  query: Paged,
): Promise<Page<RequestLog>> {
  const limit = pageLimit(query.limit);
  const before = query.cursor === undefined ? undefined : Number(deps.cursors.decode(list, found.bound, query.cursor).id);
  const rows = await listLogRows(db, found.filters, { beforeId: before, limit: limit + 1, order: "newest" });
  return toPage(
    rows.map((row) => ({ row, createdAt: row.createdAt, id: String(row.id) })),
    limit,
    ({ row }) => presentRequestLog(row),
    (position) => deps.cursors.encode(list, found.bound, position),
  );
}

/** `Last-Event-ID` (the contract has checked it is digits), at most the largest id there can be. */
function lastEventIdOf(request: Request): number | undefined {
  const given = request.headers.get("last-event-id");
  return given === null ? undefined : Math.min(Number(given), Number.MAX_SAFE_INTEGER);
}

/** What ends a stream: the credential is refused now. Anything else (the database did not answer, a throttle) is not known. */
const refusedCodes = new Set(["UNAUTHENTICATED", "IP_NOT_ALLOWED", "FORBIDDEN", "NOT_FOUND"]);

/** Authenticates the stream's request again, as the http layer did before it opened. */
function credentialCheck(deps: Pick<AppDeps, "authenticate">, security: OperationSpec["security"], request: Request) {
  return async () => {
    try {
      await deps.authenticate(security, request.headers.get("authorization"), clientOf(request), contextOf(request).local);
      return true;
    } catch (error) {
      if (error instanceof AppError && refusedCodes.has(error.code)) return false;
      throw error;
    }
  };
}

const eventStream = (body: ReadableStream<Uint8Array>): Outcome<never> => ({
  status: 200,
  raw: body,
  contentType: "text/event-stream",
  headers: { "cache-control": "no-cache" },
});

export function requestLogRoutes(deps: RequestLogRouteDeps) {
  const handlers = {
    listRequestLogs: async (input) => {
      const scope = principalOf(input);
      const found = clientFiltersOf(scope, input.query);
      return {
        status: 200,
        data: await readPage(deps, deps.db, `request-logs:${scope.accountId}:${scope.mode}`, found, input.query),
      };
    },
    getRequestLog: async (input) => {
      const row = await findLogRow(deps.db, input.params.request_id, principalOf(input));
      if (!row) throw notFound("Request log");
      return { status: 200, data: presentRequestLogDetail(row) };
    },
    streamRequestLogs: async (input) => {
      const body = await deps.requestLogStreams.open({
        filters: clientFiltersOf(principalOf(input), input.query).filters,
        afterId: lastEventIdOf(input.request),
        stillAllowed: credentialCheck(deps, "apiKey", input.request),
        signal: input.request.signal,
      });
      return eventStream(body);
    },
    adminListRequestLogs: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => readPage(deps, db, "admin-request-logs", filtersOf(query), query)),
    }),
    adminGetRequestLog: async ({ params }) => {
      const row = await deps.reads.read((db) => findLogRow(db, params.request_id));
      if (!row) throw notFound("Request log");
      return { status: 200, data: presentRequestLogDetail(row) };
    },
    adminStreamRequestLogs: async ({ query, request }) => {
      const body = await deps.requestLogStreams.open({
        filters: filtersOf(query).filters,
        afterId: lastEventIdOf(request),
        stillAllowed: credentialCheck(deps, "admin", request),
        signal: request.signal,
      });
      return eventStream(body);
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
