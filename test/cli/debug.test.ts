import { describe, expect, test } from "bun:test";
import { testAdminToken } from "../helpers/server.ts";
import { cliEnv, cliServer, closedPort, runCli } from "./cli.ts";

const cli = cliServer({ account: { name: "debug", kobo: 100_000 } });
const env = () => cli.apiEnv();
const testKey = () => cli.account.testKey;

const vend = ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "100", "--yes", "--json"];

describe("--debug and VENDCTL_DEBUG=1: every request and response on stderr, secrets redacted", () => {
  test("a vend: request line, headers and body, status and time; the API key never in full; stdout the clean JSON", async () => {
    const result = await runCli(["--debug", ...vend], env());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`> POST ${cli.server.url}/api/v1/vend\n`);
    expect(result.stderr).toMatch(/^> authorization: Bearer rg_test_\w{4}…\[redacted\]$/m);
    expect(result.stderr).toMatch(/^> idempotency-key: [0-9a-f-]{36}$/m);
    expect(result.stderr).toMatch(/^> {3}"phone_number": "08031234567",?$/m);
    expect(result.stderr).toMatch(/^< 20[01] \w+.* \(\d+ ms\)$/m);
    expect(result.stderr).toMatch(/^< x-request-id: \S+$/m);
    expect(result.stderr).toContain('"reference": "txn_');
    expect(result.stderr).not.toContain(testKey());
    expect(result.stderr).not.toContain(testKey().slice(12));
    const transaction = JSON.parse(result.stdout);
    expect(transaction).toMatchObject({ status: expect.any(String), destination: expect.any(String) });
    expect(transaction.reference).toStartWith("txn_");
  });

  test("VENDCTL_DEBUG=1 does the same; stdout is byte for byte what it is without it", async () => {
    const plain = await runCli(["wallet", "balance", "--json"], env());
    const debugged = await runCli(["wallet", "balance", "--json"], { ...env(), VENDCTL_DEBUG: "1" });
    expect(debugged.code).toBe(0);
    expect(debugged.stdout).toBe(plain.stdout);
    expect(plain.stderr).toBe("");
    expect(debugged.stderr).toContain(`> GET ${cli.server.url}/api/v1/wallet\n`);
    expect(debugged.stderr).toMatch(/^< 200 OK \(\d+ ms\)$/m);
    expect(debugged.stderr).not.toContain(testKey());
  });

  test("secrets in answers (a new account's keys) are redacted on stderr but printed whole on stdout", async () => {
    const admin = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
    const result = await runCli(["accounts", "create", "--name", "debug-secrets", "--json", "--debug"], admin);
    expect(result.code).toBe(0);
    const keys: string[] = JSON.parse(result.stdout).keys.map((k: { key: string }) => k.key);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(result.stderr).not.toContain(key);
    expect(result.stderr).toMatch(/"key": "rg_(test|live)_\w{4}…\[redacted\]"/);
    expect(result.stderr).not.toContain(testAdminToken);
    expect(result.stderr).toContain("> authorization: Bearer [redacted]");
  });

  test("an API error is logged with its status, and still reported as usual", async () => {
    const result = await runCli(["transactions", "get", "txn_000000000000000000000000", "--debug"], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^< 404 Not Found \(\d+ ms\)$/m);
    expect(result.stderr).toMatch(/^NOT_FOUND: /m);
  });

  test("an unreachable server: the failed request is logged, exit 3", async () => {
    const url = `http://127.0.0.1:${closedPort()}`;
    const result = await runCli(["wallet", "balance", "--debug"], { ...env(), VENDCTL_BASE_URL: url });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`> GET ${url}/api/v1/wallet\n`);
    expect(result.stderr).toMatch(new RegExp(`^! GET ${url}/api/v1/wallet failed \\(\\d+ ms\\): `, "m"));
  });

  test("without --debug nothing is logged", async () => {
    const result = await runCli(vend, env());
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("> POST");
  });
});
