// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { type FencedBlock, fencedBlocks, treatmentOf } from "./fenced-blocks.ts";

/**
 * Every example in the README and the client guide runs, as written, against a real service.
 *
 * The service is started as `npm start` starts it (`bun src/main.ts`, the embedded database, a new data
 * directory, a free port, `ADMIN_TOKEN` set), and the test key its first start prints is the key the
 * examples use. Then every fenced block of README.md and docs/api.md, by its language:
 *
 * - `sh`, `bash`, `shell`: run by bash under `set -euo pipefail`; the block passes when bash exits 0. Write
 *   curl as `curl --fail-with-body -sS`, so an error answer fails the block.
 * - `ts`, `typescript`: run by Bun; the block passes when it exits 0 (an SDK call that fails throws).
 *   `@vend/sdk` (and `@vend/sdk/admin`) is rewritten to the SDK's source in `sdk/src/`; other packages
 *   resolve from the repository's `node_modules`.
 * - `json`, `text`, `console` (a terminal transcript: `$ npm start` and what it prints), `http`, `csv`,
 *   `yaml`: shown, never run.
 * - any other language, or none: the test fails, so a new block is always either run or marked as output.
 *
 * Conventions of the examples: the base URL and the key are `$VEND_URL` and `$VEND_KEY` in shell blocks and
 * `process.env.VEND_URL` and `process.env.VEND_KEY` in TypeScript; vendctl reads `VENDCTL_BASE_URL`,
 * `VENDCTL_API_KEY` and `VENDCTL_ADMIN_TOKEN` (the service's `ADMIN_TOKEN`). The test sets all of them. A
 * block may also set them itself with the literal placeholders `http://127.0.0.1:8080` (the default address)
 * and `rg_test_...`: before a block runs, the test replaces those with the real address and key.
 *
 * Blocks run one at a time, in order: README.md's, then docs/api.md's, each file from top to bottom, in a
 * working directory of their own, with `vendctl` on the PATH as `npm link` puts it there (and no
 * `node_modules/.bin`, which a reader's shell does not have). Each block is its own process: it shares no
 * shell variables with another block, but it may rely on what earlier blocks of its file did to the
 * service (a funded wallet, say). Examples that need an outcome ask for it with `wait`, never by sleeping.
 *
 * `DOCS_EXAMPLES_SHOW=1` prints what every block printed (to copy an answer into the guide as a sample).
 */

const root = join(import.meta.dir, "../..");
const documents = ["README.md", "docs/api.md"];
const blockTimeoutMs = 60_000;

const blocks = documents.flatMap((file) => fencedBlocks(file, readFileSync(join(root, file), "utf8")));
const runnable = blocks.filter((block) => treatmentOf(block.language) !== "output");

const scratch = mkdtempSync(join(tmpdir(), "vend-doc-examples-"));
const workDir = join(scratch, "work");
const scriptDir = join(scratch, "scripts");
const binDir = join(scratch, "bin");
const adminToken = "docs-examples-admin-token-0123456789";

let server: StartedProcess;
let baseUrl = "";
let apiKey = "";

beforeAll(async () => {
  for (const dir of [workDir, scriptDir, binDir]) mkdirSync(dir);
  // What `npm link` installs: the package's bin, by a symbolic link.
  symlinkSync(join(root, "cli/vendctl.js"), join(binDir, "vendctl"));
  // TypeScript blocks import packages as a project that depends on them would.
  symlinkSync(join(root, "node_modules"), join(scriptDir, "node_modules"));
  server = spawnProcess(
    [process.execPath, join(root, "src/main.ts")],
    childEnv({ VEND_DATA_DIR: join(scratch, "data"), PORT: "0", ADMIN_TOKEN: adminToken }),
  );
  [, apiKey = ""] = await server.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  [, baseUrl = ""] = await server.waitFor(/listening on (http:\/\/\S+)/);
}, processTestMs);

afterAll(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The environment of a reader's shell after the guide's set-up: no `node_modules/.bin`, vendctl linked. */
function blockEnv(): Record<string, string> {
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && !dir.endsWith(join("node_modules", ".bin")));
  return {
    PATH: [binDir, ...path].join(delimiter),
    HOME: process.env.HOME ?? scratch,
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    LANG: "C.UTF-8",
    VEND_URL: baseUrl,
    VEND_KEY: apiKey,
    VENDCTL_BASE_URL: baseUrl,
    VENDCTL_API_KEY: apiKey,
    VENDCTL_ADMIN_TOKEN: adminToken,
    VENDCTL_CONFIG_DIR: join(scratch, "vendctl-config"),
  };
}

/** The block's text with the placeholders replaced and, in TypeScript, the SDK imported from its source. */
function prepare(block: Pick<FencedBlock, "language" | "code">): string {
  const code = block.code
    .replaceAll("http://127.0.0.1:8080", baseUrl)
    .replaceAll("rg_test_...", apiKey)
    .replaceAll("rg_test_…", apiKey);
  if (treatmentOf(block.language) !== "bun") return `set -euo pipefail\n${code}`;
  return code
    .replaceAll('"@vend/sdk/admin"', JSON.stringify(join(root, "sdk/src/admin.ts")))
    .replaceAll('"@vend/sdk"', JSON.stringify(join(root, "sdk/src/index.ts")));
}

let scripts = 0;

/** Runs one block; resolves with its exit code and what it printed. */
async function runBlock(block: Pick<FencedBlock, "language" | "code">) {
  const bun = treatmentOf(block.language) === "bun";
  const script = join(scriptDir, `block-${++scripts}.${bun ? "ts" : "sh"}`);
  writeFileSync(script, prepare(block));
  const proc = spawnProcess(bun ? [process.execPath, script] : ["bash", script], blockEnv(), workDir);
  const killer = setTimeout(() => proc.proc.kill("SIGKILL"), blockTimeoutMs - 5_000);
  const code = await proc.finished();
  clearTimeout(killer);
  return { code, output: proc.output() };
}

describe("the examples' languages", () => {
  test("every fenced block of README.md and docs/api.md is run or marked as output", () => {
    const unknown = blocks.filter((block) => treatmentOf(block.language) === undefined);
    expect(unknown.map((block) => `${block.file}:${block.line} \`\`\`${block.language}`)).toEqual([]);
    expect(runnable.length).toBeGreaterThan(0);
  });

  test("an unknown or missing language is refused, a known one is not", () => {
    const planted = fencedBlocks("planted.md", "```python\nprint(1)\n```\n\n```\nplain\n```\n\n  ```sh\n  true\n  ```\n");
    expect(planted.map((block) => [block.line, block.language, treatmentOf(block.language)])).toEqual([
      [1, "python", undefined],
      [5, "", undefined],
      [9, "sh", "bash"],
    ]);
    expect(planted[2]?.code).toBe("true\n");
  });
});

describe("a block that fails fails its test", () => {
  test(
    "curl --fail-with-body to a path that does not exist, a failing command before a passing one, a TypeScript throw",
    async () => {
      const wrongPath = await runBlock({
        language: "sh",
        code: 'curl --fail-with-body -sS "$VEND_URL/api/v1/no-such-path" -H "Authorization: Bearer $VEND_KEY"\n',
      });
      expect(wrongPath.code).not.toBe(0);
      expect(wrongPath.output).toContain("NOT_FOUND");
      expect((await runBlock({ language: "bash", code: "false\necho still here\n" })).code).not.toBe(0);
      const missing = await runBlock({
        language: "ts",
        code: [
          'import { VendClient } from "@vend/sdk";',
          "const vend = new VendClient({ apiKey: process.env.VEND_KEY ?? '', baseUrl: process.env.VEND_URL ?? '' });",
          'await vend.transactions.get("txn_000000000000000000000000");',
          "",
        ].join("\n"),
      });
      expect(missing.code).not.toBe(0);
      expect(missing.output).toContain("NotFoundError");
    },
    blockTimeoutMs,
  );
});

describe("the TypeScript examples", () => {
  test(
    "type-check as the repository's own code does (tsconfig.json: strict, @vend/sdk from sdk/src)",
    async () => {
      const dir = join(scratch, "typecheck");
      mkdirSync(dir);
      symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
      const files = blocks
        .filter((block) => treatmentOf(block.language) === "bun")
        .map((block) => {
          const file = join(dir, `${block.file.replaceAll("/", "-")}-${block.line}.ts`);
          // A module each, as a reader's file would be: top-level await, no names shared between blocks.
          writeFileSync(file, `${block.code}export {};\n`);
          return file;
        });
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: join(root, "tsconfig.json"), include: files }));
      const tsc = spawnProcess([process.execPath, join(root, "node_modules/typescript/bin/tsc"), "-p", dir], blockEnv());
      const code = await tsc.finished();
      expect(tsc.output()).toBe("");
      expect(code).toBe(0);
    },
    blockTimeoutMs,
  );
});

describe("the examples run", () => {
  for (const block of runnable)
    test(
      `${block.file}:${block.line} (${block.language})`,
      async () => {
        const { code, output } = await runBlock(block);
        if (process.env.DOCS_EXAMPLES_SHOW === "1") console.log(`== ${block.file}:${block.line}\n${output}`);
        if (code !== 0) console.error(`${block.file}:${block.line} exited ${code}:\n${block.code}\n--- output ---\n${output}`);
        expect(code).toBe(0);
      },
      blockTimeoutMs,
    );
});
