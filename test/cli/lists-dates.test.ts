import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount } from "../helpers/accounts.ts";
import { vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "./cli.ts";

/** Answers every list with one empty page and keeps the query each request sent. */
const queries: URLSearchParams[] = [];
const recorder = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    queries.push(new URL(request.url).searchParams);
    return Response.json({ data: { items: [], page: { next_cursor: null, has_more: false } } });
  },
});
const recorded = (tz: string) =>
  cliEnv({ VENDCTL_BASE_URL: recorder.url.origin, VENDCTL_API_KEY: "rg_test_x", VENDCTL_ADMIN_TOKEN: "t", TZ: tz });

/** The from and to a command sent. */
async function sentRange(args: string[], tz = "Africa/Lagos") {
  queries.length = 0;
  const result = await runCli([...args, "--json"], recorded(tz));
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  return { from: queries[0]?.get("from"), to: queries[0]?.get("to") };
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  removeConfigDirs();
  recorder.stop(true);
  await server.close();
});

const lists = [
  ["transactions", "list"],
  ["wallet", "statement"],
  ["audit", "list"],
  ["admin", "transactions", "list"],
];

describe("--from and --to take a plain date in the user's time zone", () => {
  test.each(lists)("%s %s …: a date is that whole day in local time (TZ=Africa/Lagos)", async (...args) => {
    expect(await sentRange([...args, "--from", "2026-11-22", "--to", "2026-11-22"])).toEqual({
      from: "2026-11-22T00:00:00+01:00",
      to: "2026-11-22T23:59:59.999+01:00",
    });
  });

  test("RFC 3339 times are sent as given; a day when clocks change keeps each edge's own offset", async () => {
    expect(
      await sentRange(["transactions", "list", "--from", "2026-11-22T08:00:00Z", "--to", "2026-11-22T09:30:00.5+01:00"]),
    ).toEqual({
      from: "2026-11-22T08:00:00Z",
      to: "2026-11-22T09:30:00.5+01:00",
    });
    // New York leaves summer time on 1 November 2026.
    expect(await sentRange(["transactions", "list", "--from", "2026-11-01", "--to", "2026-11-01"], "America/New_York")).toEqual({
      from: "2026-11-01T00:00:00-04:00",
      to: "2026-11-01T23:59:59.999-05:00",
    });
  });

  test.each([["22/11/2026"], ["2026-02-30"], ["yesterday"], ["2026-11-22T08:00"]])(
    "--from %s is a usage error with an example, and nothing is sent",
    async (value) => {
      queries.length = 0;
      const result = await runCli(["transactions", "list", "--from", value], recorded("Africa/Lagos"));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("2026-11-22");
      expect(result.stderr).toContain("RFC 3339");
      expect(queries).toHaveLength(0);
    },
  );

  test("against the server: today's date finds an order made now, yesterday's does not", async () => {
    const account = await fundedAccount(server, 100_000, "dates");
    const reference = await vendAirtime(account.client);
    const env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey, TZ: "Africa/Lagos" });
    const day = (offsetDays: number) =>
      new Date(Date.now() + offsetDays * 86_400_000).toLocaleDateString("en-CA", { timeZone: "Africa/Lagos" });
    const today = await runJson<{ reference: string }[]>(["transactions", "list", "--from", day(0), "--to", day(0)], env);
    expect(today.map((t) => t.reference)).toEqual([reference]);
    expect(await runJson(["transactions", "list", "--to", day(-1)], env)).toEqual([]);
    expect(await runJson(["transactions", "list", "--from", day(1)], env)).toEqual([]);
  });
});
