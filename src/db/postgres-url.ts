import type { Target } from "./reply-watchdog.ts";

/**
 * A PostgreSQL URL as postgres.js reads it, which WHATWG `URL` cannot parse when it names several hosts
 * (`postgres://user@h1:5432,h2:5433/db?target_session_attrs=primary`, the failover form libpq also takes).
 */
export interface PostgresUrl {
  /** Every host in order, each with its port (a Unix socket directory when given as `?host=/path`). */
  targets: Target[];
  /** The query parameters (`sslmode`, `target_session_attrs`, …). */
  params: URLSearchParams;
}

/** Parses `url`; throws an Error saying what is wrong (callers name the variable). */
export function parsePostgresUrl(url: string): PostgresUrl {
  const match = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)(?:\/[^?#]*)?(?:\?([^#]*))?(?:#.*)?$/.exec(url);
  if (!match) throw new Error("must be a postgres:// or postgresql:// URL");
  const params = new URLSearchParams(match[2] ?? "");
  const socketDir = params.get("host");
  const hosts = (match[1] ?? "").split(",");
  const targets = hosts.map((entry): Target => {
    // `[::1]:5432`, `host:5432`, `host`, or empty (localhost, or the socket directory of `?host=`).
    const parsed = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(entry);
    if (!parsed) throw new Error(`has a host that cannot be read: "${entry}"`);
    const host = decodeURIComponent((parsed[1] ?? "").replace(/^\[|\]$/g, ""));
    const port = Number(parsed[2] || params.get("port") || 5432);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`has a port out of range: "${entry}"`);
    if (!host && socketDir?.startsWith("/")) return { path: `${socketDir}/.s.PGSQL.${port}` };
    return { host: host || socketDir || "localhost", port };
  });
  return { targets, params };
}

/**
 * Failover URLs must ask for the primary. postgres.js judges `read-write` by `default_transaction_read_only`,
 * which a standby does not set, so it connects to a standby and every write fails (25006); `primary` is
 * judged by `in_hot_standby` and works. A URL with several hosts and no choice gets `primary`.
 */
export function withFailoverDefaults(url: string): string {
  const { targets, params } = parsePostgresUrl(url);
  const attrs = params.get("target_session_attrs");
  if (attrs === "read-write")
    throw new Error(
      "sets target_session_attrs=read-write, which postgres.js judges by default_transaction_read_only (a standby does not set it): use target_session_attrs=primary",
    );
  if (targets.length < 2 || attrs) return url;
  return `${url}${url.includes("?") ? "&" : "?"}target_session_attrs=primary`;
}

/** Whether the URL asks for TLS (then the driver's own sockets are used; see plainTargets in client.ts). */
export function asksForTls(params: URLSearchParams): boolean {
  const ssl = params.get("sslmode") ?? params.get("ssl") ?? process.env.PGSSLMODE ?? process.env.PGSSL;
  return Boolean(ssl && ssl !== "disable" && ssl !== "false");
}
