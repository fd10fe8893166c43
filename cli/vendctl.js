#!/usr/bin/env node
// `npx vendctl …` on a machine with only Node.js and npm: run cli/index.ts with the Bun that the package ships.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const exe = process.platform === "win32" ? ".exe" : "";

function findBun() {
  const candidates = [join(here, "..", "node_modules", ".bin", `bun${process.platform === "win32" ? ".cmd" : ""}`)];
  try {
    const bunPackage = createRequire(import.meta.url).resolve("bun/package.json");
    candidates.push(join(dirname(bunPackage), "bin", `bun${exe}`));
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
  console.error(`vendctl: cannot start Bun (${error.message}); run npm install`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 1) : (code ?? 1));
});
