import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { expectRecordedByAnswer } from "../helpers/accounts.ts";
import { cliEnv, cliServer, closedPort, runCli, runJson } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];

// The shortest propagation bound allowed: a revocation's answer waits at most that for the processes to refuse it.
const cli = cliServer({
  config: { keyPropagationMs: 200 },
  account: { name: "confirmations", kobo: 0 },
  env: { TERM: "xterm" },
});
const admin = () => cli.adminEnv();
const apiEnv = () => cli.apiEnv();

/** vendctl on a pseudo-terminal, answering `answer` to `question`; its exit code. */
async function answerOnTerminal(args: string[], env: Record<string, string | undefined>, question: string, answer: string) {
  const terminal = onTerminal(args, env);
  await terminal.answer(question, answer);
  return terminal.exited();
}

async function newKey(): Promise<Schemas["ApiKeyCreated"]> {
  return runJson<Schemas["ApiKeyCreated"]>(["keys", "create", cli.account.id, "--mode", "test"], admin());
}

async function keyWorks(key: string): Promise<boolean> {
  return (
    (await runCli(["wallet", "balance", "--json"], cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: key }))).code === 0
  );
}

async function endpointIds(): Promise<string[]> {
  return (await runJson<Schemas["WebhookEndpoint"][]>(["webhooks", "list"], apiEnv())).map((e) => e.id);
}

async function newEndpoint(): Promise<Schemas["WebhookEndpointCreated"]> {
  return runJson<Schemas["WebhookEndpointCreated"]>(["webhooks", "add", `http://127.0.0.1:${closedPort()}/hooks`], apiEnv());
}

describe("keys revoke asks before revoking", () => {
  test("without a terminal and without --yes: exit 2 naming --yes, and the key still works", async () => {
    const key = await newKey();
    const refused = await runCli(["keys", "revoke", key.id], admin());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    expect(refused.stdout).toBe("");
    expect(await keyWorks(key.key)).toBe(true);
  });

  test("with --yes it revokes: refused from the answer on", async () => {
    const key = await newKey();
    const revoked = await runJson<Schemas["ApiKey"]>(["keys", "revoke", key.id, "--yes"], admin());
    expect(revoked.revoked_at).not.toBeNull();
    expectRecordedByAnswer(revoked.revoked_at);
    expect(await keyWorks(key.key)).toBe(false);
  });

  test.skipIf(!script)("on a terminal, answering no leaves the key working (exit 130); yes revokes it", async () => {
    const key = await newKey();
    const declined = await answerOnTerminal(["keys", "revoke", key.id], admin(), `Revoke API key ${key.id}?`, "n");
    expect(declined).toBe(130);
    expect(await keyWorks(key.key)).toBe(true);
    const accepted = await answerOnTerminal(["keys", "revoke", key.id, "--json"], admin(), `Revoke API key ${key.id}?`, "y");
    expect(accepted).toBe(0);
    // Answered means in force: refused at once, no time to wait.
    expect(await keyWorks(key.key)).toBe(false);
  });
});

describe("webhooks remove asks before removing", () => {
  test("without a terminal and without --yes: exit 2 naming --yes, and the endpoint is still listed", async () => {
    const endpoint = await newEndpoint();
    const refused = await runCli(["webhooks", "remove", endpoint.id], apiEnv());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    expect(await endpointIds()).toContain(endpoint.id);
  });

  test("with --yes it removes it", async () => {
    const endpoint = await newEndpoint();
    expect(await runJson(["webhooks", "remove", endpoint.id, "--yes"], apiEnv())).toEqual({ id: endpoint.id, deleted: true });
    expect(await endpointIds()).not.toContain(endpoint.id);
  });

  test.skipIf(!script)("on a terminal the question shows the URL; answering no keeps the endpoint", async () => {
    const endpoint = await newEndpoint();
    const question = `Remove webhook endpoint ${endpoint.id} (${endpoint.url})?`;
    const declined = await answerOnTerminal(["webhooks", "remove", endpoint.id], apiEnv(), question, "n");
    expect(declined).toBe(130);
    expect(await endpointIds()).toContain(endpoint.id);
  });
});

describe("secrets shown once come with a warning on stderr", () => {
  test("keys create, webhooks add and accounts create: stdout is the JSON, the warning is on stderr", async () => {
    const cases: [string[], Record<string, string | undefined>, string][] = [
      [["keys", "create", cli.account.id, "--mode", "test", "--json"], admin(), "Save this key now: it is shown only once."],
      [
        ["webhooks", "add", "http://127.0.0.1:9/hooks", "--json"],
        apiEnv(),
        "Save this signing secret now: it is shown only once.",
      ],
      [["accounts", "create", "--name", "Warned", "--json"], admin(), "Save these keys now: they are shown only once."],
    ];
    for (const [args, env, warning] of cases) {
      const result = await runCli(args, env);
      expect(result.code).toBe(0);
      expect(() => JSON.parse(result.stdout)).not.toThrow();
      expect(result.stdout).not.toContain("shown only once");
      expect(result.stderr).toContain(warning);
    }
  });
});
