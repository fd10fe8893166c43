import { beforeAll, describe, expect, test } from "bun:test";
import { processingRunner } from "../../src/background.ts";
import { fastProcessing, vendAirtime } from "../helpers/processing.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

const cli = cliServer({ config: fastProcessing(), account: { name: "cursors", kobo: 1_000_000 } });

beforeAll(async () => {
  const server = cli.server;
  await server.createAccount("second");
  await server.createAccount("third");
  // Three orders left pending by the sandbox (4444), each completed by a stored callback: three callbacks, three events.
  const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "cursor-worker").tick();
  for (let n = 0; n < 3; n++) {
    const reference = await vendAirtime(cli.account.client, "08031234444");
    await tick();
    const sent = await runCli(["callbacks", "send", reference, "--status", "successful"], cli.adminEnv());
    expect(sent.code).toBe(0);
  }
});

const cases: [string, string[], () => Record<string, string | undefined>][] = [
  ["accounts list", ["accounts", "list"], cli.adminEnv],
  ["events list", ["events", "list"], cli.apiEnv],
  ["callbacks list", ["callbacks", "list"], cli.adminEnv],
];

describe("every list prints a cursor to resume from, and takes --cursor", () => {
  test.each(cases)("%s --cursor resumes where --limit stopped", async (_name, args, env) => {
    const firstTwo = await runJson<{ id: string }[]>([...args, "--limit", "2"], env());
    expect(firstTwo).toHaveLength(2);
    const first = await runCli([...args, "--limit", "1", "--json"], env());
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).map((r: { id: string }) => r.id)).toEqual([firstTwo[0]?.id]);
    const cursor = /add --cursor (\S+) \(or use --all\)/.exec(first.stderr)?.[1];
    expect(cursor, first.stderr).toBeDefined();
    const next = await runJson<{ id: string }[]>([...args, "--limit", "1", "--cursor", cursor ?? ""], env());
    expect(next.map((r) => r.id)).toEqual([firstTwo[1]?.id ?? "second row"]);
    expect((await runCli([...args, "--help"], env())).stdout).toContain("--cursor <cursor>");
  });
});
