/**
 * `npm run build`: the standalone executables, `dist/vend` (the service: every command of src/main.ts) and
 * `dist/vendctl` (the CLI), with `bun build --compile` for this machine's platform. Each carries what it
 * serves or reads (the contract, the migrations, the `/docs` renderer: files the code imports as files) and
 * needs neither Bun nor node_modules where it runs. `--version` prints the version, the commit and the date
 * fixed here.
 *
 * `BUILD_TARGET` builds for another platform (a release builds bun-linux-x64, bun-linux-arm64,
 * bun-darwin-x64, bun-darwin-arm64 and bun-windows-x64); `BUILD_OUT` names another folder.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const out = process.env.BUILD_OUT || join(root, "dist");
const target = process.env.BUILD_TARGET;

function commitOf(): string {
  const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: root, stderr: "ignore" });
  const commit = git.exitCode === 0 ? git.stdout.toString().trim() : "";
  if (!commit) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: root }).stdout.toString();
  return dirty.trim() ? `${commit}-modified` : commit;
}

const defines = {
  "process.env.VEND_BUILD_COMMIT": JSON.stringify(commitOf()),
  "process.env.VEND_BUILD_DATE": JSON.stringify(new Date().toISOString().replace(/\.\d+Z$/, "Z")),
};

async function compile(entry: string, name: string): Promise<void> {
  const started = performance.now();
  // Embedded files keep their own names inside the executable (/$bunfs/root/pglite.wasm, …).
  const command = [
    process.execPath,
    "build",
    "--compile",
    "--minify-syntax",
    "--sourcemap=inline",
    "--asset-naming=[name].[ext]",
    entry,
  ];
  command.push("--outfile", join(out, name));
  if (target) command.push(`--target=${target}`);
  for (const [variable, value] of Object.entries(defines)) command.push("--define", `${variable}=${value}`);
  const build = Bun.spawn(command, { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [code, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) {
    console.error(stderr.trim());
    throw new Error(`building ${name} failed (exit ${code})`);
  }
  const size = Bun.file(join(out, name)).size;
  console.log(`${join(out, name)}: ${(size / 1048576).toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

mkdirSync(out, { recursive: true });
await compile("src/main.ts", "vend");
await compile("cli/index.ts", "vendctl");
