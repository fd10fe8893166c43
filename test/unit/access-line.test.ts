import { describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { type AccessFields, createLogger, type Logger, logAccess } from "../../src/logger.ts";
import { waitUntil } from "../helpers/wait.ts";

function capturing(level = "info"): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger(level, stream), lines };
}

const withoutTime = (line: string) => {
  const { time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  expect(typeof time).toBe("string");
  return rest;
};

describe("access line", () => {
  // The line is built by hand for speed; it must stay the line pino writes for the same fields.
  test.each<[string, AccessFields]>([
    [
      "an authenticated operation",
      {
        request_id: "req_0123456789abcdefghij",
        method: "POST",
        route: "/api/v1/vend",
        operation: "createVend",
        account_id: "8f0c9a2e-1b2c-4d5e-8f90-123456789abc",
        status: 202,
        duration_ms: 12.3,
      },
    ],
    [
      "an unmatched request without operation or account",
      { request_id: 'given:"id"\\', method: "PROPFIND", route: "(unmatched)", status: 404, duration_ms: 0 },
    ],
  ])("%s: the same keys in the same order and the same values as pino's line", async (_, fields) => {
    const { logger, lines } = capturing();
    logAccess(logger, fields);
    logger.info(fields, "request");
    await waitUntil(() => lines.length >= 2, { what: "both lines written" });
    expect(lines).toHaveLength(2);
    const [fast, viaPino] = lines.map(withoutTime);
    expect(Object.keys(fast ?? {})).toEqual(Object.keys(viaPino ?? {}));
    expect(fast).toEqual(viaPino ?? {});
    expect(lines[0]?.endsWith("}\n")).toBe(true);
  });

  test("follows the logger's level", async () => {
    const fields: AccessFields = { request_id: "r", method: "GET", route: "/healthz", status: 200, duration_ms: 1 };
    const quiet = capturing("warn");
    logAccess(quiet.logger, fields);
    quiet.logger.level = "info";
    logAccess(quiet.logger, fields);
    // The quiet call came first: had it written a line, that line would be here before this one.
    await waitUntil(() => quiet.lines.length >= 1, { what: "the line at info" });
    expect(quiet.lines).toHaveLength(1);
  });
});
