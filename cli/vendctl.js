#!/bin/sh
":"; // 2>/dev/null; f=$(readlink -f "$0" 2>/dev/null) && b="${f%/*}/../node_modules/.bin/bun" && [ -x "$b" ] && exec "$b" "${f%/*}/index.ts" "$@"; exec node "$0" "$@"
// `vendctl`, the package's bin (`npm link`, `npx vendctl`), on a machine with only Node.js and npm. The line
// above is both shell and JavaScript. Run as a command, the shell execs the pinned Bun on cli/index.ts at
// once: no Node start-up in front of every command, and Bun owns the terminal, signals and exit code. When
// that Bun is not at ../node_modules/.bin (the package installed as a dependency, Bun hoisted), or when run
// as `node cli/vendctl.js`, Node runs the rest of this file: it finds Bun and spawns it.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function findBun() {
  const candidates = [join(here, "..", "node_modules", ".bin", `bun${process.platform === "win32" ? ".cmd" : ""}`)];
  try {
    // The package's own `bin` entry (bin/bun.exe, on every platform).
    const require = createRequire(import.meta.url);
    const bunPackage = require.resolve("bun/package.json");
    candidates.push(join(dirname(bunPackage), require(bunPackage).bin.bun));
  } catch {
    // not installed as a package next to us
  }
  return candidates.find((path) => existsSync(path)) ?? "bun";
}

const child = spawn(findBun(), [join(here, "index.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
  shell: process.platform === "win32",
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  console.error(`error: cannot start Bun (${error.message}); run npm install`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 1) : (code ?? 1));
});
