import { describe, expect, test } from "bun:test";
import { isDatabaseUnavailable } from "../../src/db/unavailable.ts";

const coded = (code: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(`error ${code}`), { code, ...fields });
/** What drizzle throws: its own error with the driver's as the cause. */
const wrapped = (cause: unknown) => new Error("Failed query: select 1", { cause });
/** A PostgreSQL error as postgres.js builds it (PostgresError: severity, SQLSTATE code). */
const serverError = (code: string, severity = "ERROR") => Object.assign(new Error(`server ${code}`), { code, severity });

describe("isDatabaseUnavailable", () => {
  const unavailable: [string, unknown][] = [
    // Bun's write on a socket that closed under postgres.js, nested the way drizzle reports it.
    ["ERR_SOCKET_CLOSED in a cause", wrapped(coded("ERR_SOCKET_CLOSED", { message: "Socket is closed" }))],
    ["ERR_SOCKET_CLOSED two causes deep", new Error("outer", { cause: wrapped(coded("ERR_SOCKET_CLOSED")) })],
    ["ERR_STREAM_DESTROYED", coded("ERR_STREAM_DESTROYED")],
    ["ERR_STREAM_WRITE_AFTER_END", coded("ERR_STREAM_WRITE_AFTER_END")],
    ["ECONNRESET", wrapped(coded("ECONNRESET"))],
    ["ECONNREFUSED", coded("ECONNREFUSED")],
    ["EPIPE", coded("EPIPE")],
    ["ETIMEDOUT (the reply watchdog)", coded("ETIMEDOUT")],
    ["an E-code nobody listed yet", wrapped(coded("ENEWFAILURE"))],
    ["EAI_AGAIN (DNS of the database host)", coded("EAI_AGAIN")],
    ["a system error known only by errno", Object.assign(new Error("x"), { errno: -104 })],
    ["a system error known only by syscall", Object.assign(new Error("x"), { syscall: "write" })],
    ["postgres.js CONNECTION_CLOSED", wrapped(coded("CONNECTION_CLOSED", { errno: "CONNECTION_CLOSED" }))],
    ["postgres.js CONNECTION_ENDED", coded("CONNECTION_ENDED")],
    ["postgres.js CONNECTION_DESTROYED", coded("CONNECTION_DESTROYED")],
    ["a postgres.js CONNECTION_ code not seen yet", coded("CONNECTION_LOST")],
    ["postgres.js CONNECT_TIMEOUT", coded("CONNECT_TIMEOUT")],
    ["57P01 admin shutdown", wrapped(serverError("57P01", "FATAL"))],
    ["57P02 crash shutdown", serverError("57P02", "FATAL")],
    ["57P03 cannot connect now", serverError("57P03", "FATAL")],
    ["57P05 idle session timeout", serverError("57P05", "FATAL")],
    ["57014 statement timeout", serverError("57014")],
    ["25P03 idle in transaction timeout", serverError("25P03", "FATAL")],
    ["25006 read-only transaction (a standby, or a primary being demoted)", wrapped(serverError("25006"))],
    ["08006 connection failure", serverError("08006", "FATAL")],
    ["08P01 protocol violation", serverError("08P01", "FATAL")],
    ["53300 too many connections", serverError("53300", "FATAL")],
    ["53100 disk full", serverError("53100")],
    ["58030 I/O error", serverError("58030")],
    ["a PANIC", serverError("XX000", "PANIC")],
    ["42501 could not open file", Object.assign(serverError("42501"), { message: "could not open file base/1/2" })],
    ["the embedded engine stopped", coded("DATABASE_UNAVAILABLE")],
    ["PGlite is closed", new Error("PGlite is closed")],
    ["the server starting up", new Error("the database system is starting up")],
    ["a connect AggregateError", new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")], "connect failed")],
  ];
  test.each(unavailable)("%s is unavailable (503)", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  const bugs: [string, unknown][] = [
    ["23505 unique violation", wrapped(serverError("23505"))],
    ["22P02 invalid text representation", wrapped(serverError("22P02"))],
    ["42P01 undefined table", wrapped(serverError("42P01"))],
    ["40001 serialization failure", serverError("40001")],
    ["42501 a privilege the application lacks", serverError("42501")],
    ["a Node argument error (ERR_ but not a socket or stream)", coded("ERR_INVALID_ARG_TYPE")],
    ["postgres.js UNSAFE_TRANSACTION", coded("UNSAFE_TRANSACTION")],
    ["a TypeError", new TypeError("cannot read properties of undefined")],
    ["a RangeError", new RangeError("Maximum call stack size exceeded")],
    ["a string", "boom"],
    ["undefined", undefined],
    [
      "a cause cycle",
      (() => {
        const a = new Error("a");
        const b = new Error("b", { cause: a });
        Object.assign(a, { cause: b });
        return a;
      })(),
    ],
  ];
  test.each(bugs)("%s is not unavailable (500)", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
