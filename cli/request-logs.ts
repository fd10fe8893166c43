import { type Command, InvalidArgumentError, Option } from "commander";
import { errorCodes, modes } from "../generated/constants.ts";
import type { components } from "../generated/openapi-fetch-client.ts";
import type { VendClient } from "./client.ts";
import type { Context } from "./context.ts";
import { UsageError } from "./errors.ts";
import type { Column } from "./output.ts";

type Parameters = components["parameters"];
export type RequestLog = components["schemas"]["RequestLog"];
export type RequestLogDetail = components["schemas"]["RequestLogDetail"];
type Method = Parameters["RequestLogMethodFilter"];
type Mode = (typeof modes)[number];

/** The contract's methods, as a record so that the compiler says when its list changes. */
const methodNames: Record<Method, true> = {
  GET: true,
  POST: true,
  PUT: true,
  PATCH: true,
  DELETE: true,
  HEAD: true,
  OPTIONS: true,
};

/** The filters of the list and of the tail, for a key and for operators alike. */
export interface RequestLogFilters {
  status?: string;
  method?: Method;
  route?: string;
  path?: string;
  errorCode?: string;
}

/** The filters only operators have (they read through the admin API), and --admin to read it without one. */
export interface OperatorFilters {
  account?: string;
  key?: string;
  mode?: Mode;
  operator?: string;
  admin?: boolean;
}

const statusPattern = /^[1-5](\d\d|xx)$/;

function parseStatus(value: string): string {
  const status = value.toLowerCase();
  if (!statusPattern.test(status)) throw new InvalidArgumentError("expected a status such as 402, or a class: 2xx, 4xx, 5xx");
  return status;
}

function parsePath(value: string): string {
  if (!value.startsWith("/")) throw new InvalidArgumentError("expected a path starting with /, e.g. /api/v1/vend");
  return value;
}

function parseUuid(value: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
    throw new InvalidArgumentError("expected a UUID, e.g. 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c");
  }
  return value;
}

/** Adds --status, --method, --route, --path and --error-code. */
export function addRequestLogFilters(command: Command): Command {
  return command
    .option("--status <status>", "only answers with this status (402) or of this class (2xx, 4xx, 5xx)", parseStatus)
    .addOption(new Option("--method <method>", "only this HTTP method").choices(Object.keys(methodNames)))
    .option("--route <route>", "only this operation, its path as the contract spells it: /api/v1/transactions/{reference}")
    .option("--path <prefix>", "only paths starting with this, e.g. /api/v1/vend", parsePath)
    .addOption(new Option("--error-code <code>", "only answers with this error code").choices(errorCodes));
}

/** Adds the operator filters (each reads through the admin API) and --admin. */
export function addOperatorFilters(command: Command): Command {
  return command
    .option("--account <id>", "only this account's requests (admin token)", parseUuid)
    .option("--key <id>", "only requests made with this API key, by its id (admin token)", parseUuid)
    .addOption(new Option("--mode <mode>", "only requests made with keys of this mode (admin token)").choices(modes))
    .option("--operator <name>", "only this operator's admin requests; ADMIN_TOKEN for the bootstrap token (admin token)")
    .option("--admin", "every account's requests through the admin API, even when an API key is configured");
}

/** The filters as the query of either API. */
export function filterQuery(flags: RequestLogFilters) {
  const { status, method, route, path, errorCode } = flags;
  return { status, method, route, path, error_code: errorCode };
}

/** The operator filters as the admin API's query. */
export function operatorQuery(flags: OperatorFilters) {
  return { account_id: flags.account, key_id: flags.key, mode: flags.mode, operator: flags.operator };
}

/** Which API reads the logs: the key's own (`/api/v1`) or every account's (`/admin/v1`). */
export interface LogsScope {
  admin: boolean;
  client: VendClient;
}

const operatorFlags = ["account", "key", "mode", "operator"] as const;

/**
 * The admin API with --admin or an operator filter, or when only an admin token is configured; otherwise the API
 * key's own requests.
 */
export function logsScope(ctx: Context, flags: OperatorFilters): LogsScope {
  const operatorFlag = operatorFlags.find((name) => flags[name] !== undefined);
  if (flags.admin || operatorFlag) {
    if (!ctx.config.adminToken) {
      throw new UsageError(
        `${operatorFlag ? `--${operatorFlag}` : "--admin"} reads every account's requests through the admin API: ` +
          "pass --admin-token, set VENDCTL_ADMIN_TOKEN or run `vendctl login`",
      );
    }
    return { admin: true, client: ctx.clients.admin() };
  }
  if (ctx.config.apiKey) return { admin: false, client: ctx.clients.api() };
  if (ctx.config.adminToken) return { admin: true, client: ctx.clients.admin() };
  throw new UsageError(
    "no API key or admin token: pass --api-key or --admin-token, set VENDCTL_API_KEY or VENDCTL_ADMIN_TOKEN, or run `vendctl login`",
  );
}

/** A duration as people read it: `4.2 ms`, `183 ms`, `12.4 s`. */
export function formatDuration(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The path with its query, as it was requested. */
export const requestedPath = (log: RequestLog): string => (log.query ? `${log.path}?${log.query}` : log.path);

/** Who made the request: the key's prefix, or the operator's name. */
const madeBy = (log: RequestLog): string | null => log.key_prefix ?? log.operator;

const csvOnly = <T>(...keys: string[]): Column<T>[] => keys.map((key) => ({ key, only: "csv" }));

/** Tables: time, status, method, path, error code, duration, request id (and who); CSV: every field of the API. */
export const requestLogColumns: Column<RequestLog>[] = [
  { key: "id", only: "csv" },
  { key: "created_at", header: "TIME" },
  { key: "status", get: (log) => String(log.status) },
  { key: "method" },
  { key: "path", get: requestedPath, only: "table" },
  ...csvOnly<RequestLog>("path", "query", "route"),
  { key: "error_code", header: "ERROR" },
  { key: "duration", header: "DURATION", get: (log) => formatDuration(log.duration_ms), only: "table" },
  { key: "duration_ms", only: "csv" },
  { key: "request_id" },
  { key: "by", header: "BY", get: madeBy, only: "table", hideEmpty: true },
  ...csvOnly<RequestLog>("account_id", "mode", "key_id", "key_prefix", "operator", "idempotency_key", "idempotent_replayed"),
  ...csvOnly<RequestLog>("client_ip", "user_agent"),
];

/** One record in full: what was asked, what was answered, by whom (the bodies follow the table). */
export const requestLogDetailColumns: Column<RequestLogDetail>[] = [
  { key: "request_id" },
  { key: "created_at", header: "TIME" },
  { key: "status", get: (log) => String(log.status) },
  { key: "error_code", header: "ERROR", hideEmpty: true },
  { key: "method" },
  { key: "path", get: requestedPath, only: "table" },
  ...csvOnly<RequestLogDetail>("path", "query"),
  { key: "route" },
  { key: "duration", header: "DURATION", get: (log) => formatDuration(log.duration_ms), only: "table" },
  { key: "duration_ms", only: "csv" },
  { key: "idempotency_key", hideEmpty: true },
  {
    key: "replayed",
    header: "REPLAYED",
    get: (log) => (log.idempotent_replayed ? "yes: the stored answer of an earlier request" : null),
    only: "table",
    hideEmpty: true,
  },
  { key: "idempotent_replayed", only: "csv" },
  { key: "account_id", header: "ACCOUNT", hideEmpty: true },
  { key: "mode", hideEmpty: true },
  { key: "key_prefix", header: "KEY", hideEmpty: true },
  { key: "key_id", hideEmpty: true },
  { key: "operator", hideEmpty: true },
  { key: "client_ip", header: "CLIENT", hideEmpty: true },
  { key: "user_agent", hideEmpty: true },
  { key: "id", header: "RECORD" },
  ...csvOnly<RequestLogDetail>("request_body", "request_body_truncated", "response_body", "response_body_truncated"),
];
