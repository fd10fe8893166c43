import { beforeAll, describe, expect, test } from "bun:test";
import { RateLimiter } from "../../src/http/rate-limit.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

const cli = cliServer({ account: { name: "limited", kobo: 10_000 }, config: { rateLimitPerMinute: 5 } });
// 30 s into a minute, frozen: the test never straddles a window.
const t0 = Date.UTC(2030, 0, 1, 12, 0, 30);

beforeAll(() => {
  const deps = cli.server.deps;
  deps.rateLimiter = new RateLimiter({ perMinute: 5, db: () => deps.db, logger: () => deps.logger, now: () => t0 });
});

describe("vendctl and the rate limit", () => {
  test("auth status shows the key's budget from the RateLimit headers; over it a command exits 1 saying when to retry", async () => {
    const status = await runJson<{ api_key: { rate_limit: unknown } }>(["auth", "status"], cli.apiEnv());
    // auth status spends two requests (the wallet, whose headers it reports, then the key list).
    expect(status.api_key.rate_limit).toEqual({ limit: 5, remaining: 4, reset_seconds: 30 });
    const table = await runCli(["auth", "status", "--table"], cli.apiEnv());
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/valid, test mode, account \S+; 5 requests a minute, 2 left, the minute ends in 30 s$/m);
    expect((await runCli(["wallet", "balance"], cli.apiEnv())).code).toBe(0);
    const refused = await runCli(["wallet", "balance"], cli.apiEnv());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("RATE_LIMITED");
    expect(refused.stderr).toContain("(retry in 30 s)");
  });
});
