import { describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { AppError, httpStatusOf } from "../../src/errors.ts";
import { contextOf } from "../../src/http/context.ts";
import { errorResponse } from "../../src/http/respond.ts";
import { createLogger } from "../../src/logger.ts";
import { waitUntil } from "../helpers/wait.ts";

function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger("info", stream), lines };
}

describe("error mapping", () => {
  test("an unexpected error is a 500 envelope without internals, logged with the request id", async () => {
    const { logger, lines } = capturingLogger();
    const request = new Request("http://x/api/v1/wallet");
    const response = errorResponse(request, new Error('relation "secret_table" does not exist'), logger);
    expect(response.status).toBe(500);
    const body = await response.json();
    expect(body).toMatchObject({ success: false, code: "INTERNAL_ERROR", data: null });
    expect(body.message).toContain(contextOf(request).id);
    expect(JSON.stringify(body)).not.toContain("secret_table");
    await waitUntil(() => lines.length > 0, { what: "the 500's error line" });
    expect(lines.join("")).toContain("secret_table");
    expect(lines.join("")).toContain(contextOf(request).id);
  });

  test("AppError keeps its code, status, data and headers", async () => {
    const { logger } = capturingLogger();
    const error = new AppError("RATE_LIMITED", "slow down", null, { "retry-after": "7" });
    const response = errorResponse(new Request("http://x/"), error, logger);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
    expect(await response.json()).toEqual({ success: false, code: "RATE_LIMITED", message: "slow down", data: null });
  });

  test.each([
    ["VALIDATION_FAILED", 400],
    ["UNAUTHENTICATED", 401],
    ["WALLET_INSUFFICIENT_FUNDS", 402],
    ["TEST_MODE_ONLY", 403],
    ["NOT_FOUND", 404],
    ["METHOD_NOT_ALLOWED", 405],
    ["IDEMPOTENCY_IN_PROGRESS", 409],
    ["CALLBACK_CONFLICT", 409],
    ["PAYLOAD_TOO_LARGE", 413],
    ["UNSUPPORTED_MEDIA_TYPE", 415],
    ["IDEMPOTENCY_KEY_REUSED", 422],
    ["RATE_LIMITED", 429],
    ["INTERNAL_ERROR", 500],
    ["SERVICE_UNAVAILABLE", 503],
    ["NO_ROUTE", 503],
  ] as const)("%s is HTTP %d (openapi.yaml, ErrorCode)", (code, status) => {
    expect(httpStatusOf(code)).toBe(status);
  });
});
