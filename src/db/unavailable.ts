/**
 * Whether an error means "the database cannot serve this now" (503) rather than a bug (500). Judged by
 * the kind of error, not by a list of codes, so a code the driver or runtime adds later is still seen:
 *
 * - a system error of the socket under the driver: Node/Bun errors carrying `errno` or `syscall`, any
 *   `E…` code (ECONNRESET, EPIPE, ETIMEDOUT, …) and `ERR_SOCKET_*` / `ERR_STREAM_*` (a write on a socket
 *   that closed under it: "Socket is closed");
 * - postgres.js losing its connection: `CONNECTION_*` (closed, ended, destroyed) and `CONNECT_TIMEOUT`;
 * - the server refusing or ending the session: SQLSTATE classes 08 (connection exception), 53
 *   (insufficient resources: disk full, out of memory, too many connections), 58 (I/O errors on the data
 *   files), 57P0x (administrator or crash shutdown, cannot connect now), a statement cut by
 *   statement_timeout (57014), a session ended for idling in a transaction (25P03), a write refused by a
 *   read-only server (25006: a standby the connection reached, or a primary being demoted in a failover), a PANIC;
 * - the embedded engine stopped after a storage failure (DATABASE_UNAVAILABLE, "PGlite is closed").
 *
 * Ordinary SQL errors (constraint violations, bad input, missing relations) are none of these. Drivers and
 * the ORM wrap errors, so the whole `cause` chain (and an AggregateError's `errors`) is examined.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const pending: unknown[] = [error];
  const seen = new Set<unknown>();
  while (pending.length > 0 && seen.size < 20) {
    const current = pending.shift();
    if (!current || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (isUnavailableFailure(current as ErrorFields)) return true;
    const { cause, errors } = current as ErrorFields;
    pending.push(cause);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}

interface ErrorFields {
  code?: unknown;
  errno?: unknown;
  syscall?: unknown;
  message?: unknown;
  severity?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const systemCode = /^((?!ERR_)E[A-Z][A-Z0-9_]*|ERR_SOCKET_\w+|ERR_STREAM_\w+)$/;
const driverConnectionCode = /^(CONNECTION_\w+|CONNECT_TIMEOUT)$/;
const unavailableSqlState = /^(08...|53...|58...|57P0.|57014|25P03|25006)$/;

function isUnavailableFailure(error: ErrorFields): boolean {
  const { code, message, severity } = error;
  if (typeof error.errno === "number" || typeof error.syscall === "string") return true;
  if (typeof code === "string") {
    if (systemCode.test(code) || driverConnectionCode.test(code) || unavailableSqlState.test(code)) return true;
    if (code === "DATABASE_UNAVAILABLE") return true;
  }
  // PANIC: the server gave up on a storage failure. A file it may not open (42501 "could not open file")
  // is a data directory that became unwritable, not a privilege the application lacks.
  if (severity === "PANIC") return true;
  if (typeof message !== "string") return false;
  if (code === "42501" && /^could not \w+ (file|directory)/.test(message)) return true;
  return /PGlite is closed|database system is (shutting down|starting up)/i.test(message);
}
