import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { version } from "../../package.json";
import { cliEnv, removeConfigDirs, runCommand } from "./cli.ts";

/** cli/vendctl.js, the package's `bin`: what `npm link` puts on PATH as `vendctl` and `npx vendctl` runs. */
const launcher = join(import.meta.dir, "../../cli/vendctl.js");
const bunPackage = join(import.meta.dir, "../../node_modules/bun");
const node = Bun.which("node");
const readlink = Bun.which("readlink");
const scratch = mkdtempSync(join(tmpdir(), "vendctl-launcher-"));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  removeConfigDirs();
});

/** A folder for PATH holding `vendctl` (a symlink to `target`, as `npm link` makes) and links to `tools`. */
function binDir(name: string, target: string, tools: string[]): string {
  const bin = join(scratch, name);
  mkdirSync(bin, { recursive: true });
  symlinkSync(target, join(bin, "vendctl"));
  for (const tool of tools) symlinkSync(tool, join(bin, tool.slice(tool.lastIndexOf("/") + 1)));
  return bin;
}

/** Runs `argv` with only `path` on PATH. */
const run = (argv: string[], path: string) => runCommand(argv, cliEnv({ PATH: path }));

describe.skipIf(!node || !readlink)("the vendctl bin", () => {
  test("linked onto PATH, it starts the pinned Bun itself: it runs with no Node on PATH, arguments and exit code passed through", async () => {
    const bin = binDir("no-node", launcher, [readlink ?? ""]);
    const ok = await run([join(bin, "vendctl"), "--version"], bin);
    expect(ok).toMatchObject({ code: 0, stdout: `vendctl ${version} (from source)\n` });
    const usage = await run([join(bin, "vendctl"), "no-such-command"], bin);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown command 'no-such-command'");
    expect(usage.stdout).toBe("");
  });

  test("run by Node (`node cli/vendctl.js`), it spawns Bun and passes arguments and exit code through", async () => {
    const path = `${dirname(node ?? "")}:${process.env.PATH ?? ""}`;
    expect(await run([node ?? "node", launcher, "--version"], path)).toMatchObject({
      code: 0,
      stdout: `vendctl ${version} (from source)\n`,
    });
    const usage = await run([node ?? "node", launcher, "no-such-command"], path);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown command 'no-such-command'");
  });

  test("installed as a dependency, Bun hoisted beside it (no ../node_modules/.bin/bun): Node finds the bun package and runs it", async () => {
    // app/node_modules/{bun, vend-service/cli/vendctl.js}; the stub index.ts prints its arguments and exits 3.
    const app = join(scratch, "app", "node_modules");
    const cli = join(app, "vend-service", "cli");
    mkdirSync(cli, { recursive: true });
    symlinkSync(bunPackage, join(app, "bun"));
    writeFileSync(join(app, "vend-service", "package.json"), JSON.stringify({ name: "vend-service", type: "module" }));
    copyFileSync(launcher, join(cli, "vendctl.js"));
    writeFileSync(join(cli, "index.ts"), "console.log(JSON.stringify(process.argv.slice(2)));\nprocess.exit(3);\n");
    const bin = binDir("hoisted", join(cli, "vendctl.js"), [readlink ?? "", node ?? ""]);
    expect(await run([join(bin, "vendctl"), "a b", "c"], bin)).toMatchObject({ code: 3, stdout: '["a b","c"]\n' });
  });
});
