import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs } from "./cli.ts";

const readme = join(import.meta.dir, "../../cli/README.md");
const launcher = join(import.meta.dir, "../../cli/vendctl.js");
const tools = Boolean(Bun.which("bash") && Bun.which("jq") && Bun.which("node"));

let server: TestServer;
const scratch = mkdtempSync(join(tmpdir(), "vendctl-qa-"));

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  removeConfigDirs();
  await server.close();
});

/** The bash block under "## QA script" in cli/README.md. */
function qaScript(): string {
  const text = readFileSync(readme, "utf8");
  const section = text.slice(text.indexOf("## QA script"));
  const block = section.match(/```bash\n([\s\S]*?)```/)?.[1];
  if (!block) throw new Error("cli/README.md has no bash block under ## QA script");
  return block;
}

describe.skipIf(!tools)("the README's QA script", () => {
  test("runs as written, with `vendctl` being the npm bin (cli/vendctl.js under Node)", async () => {
    const bin = join(scratch, "bin");
    const script = join(scratch, "qa.sh");
    mkdirSync(bin, { recursive: true });
    symlinkSync(launcher, join(bin, "vendctl"));
    writeFileSync(script, qaScript());
    const env = cliEnv({
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      VENDCTL_BASE_URL: server.url,
      VENDCTL_ADMIN_TOKEN: testAdminToken,
      // The script works in `mktemp -d`: under the test's scratch folder, removed with it.
      TMPDIR: scratch,
    });
    const proc = Bun.spawn(["bash", script], { env: env as Record<string, string>, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0) throw new Error(`QA script exited ${code}\n${stdout}\n${stderr}`);
    expect(stdout).toMatch(/QA passed: 4 vends, NGN \d+ spent/);
  }, 60_000);
});
