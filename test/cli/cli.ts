import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "../helpers/process.ts";

/** `bun cli/index.ts`, as the tests run it. */
export const cliEntry = join(import.meta.dir, "../../cli/index.ts");
export const cliCommand = (args: string[]): string[] => [process.execPath, cliEntry, ...args];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const configDirs: string[] = [];

/** A fresh, empty configuration directory (removed by `removeConfigDirs`). */
export function freshConfigDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vendctl-cfg-"));
  configDirs.push(dir);
  return dir;
}

export function removeConfigDirs(): void {
  for (const dir of configDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** This process's environment without any VENDCTL_* of the developer's shell, plus the test's values. */
export function cliEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env = childEnv({});
  for (const key of Object.keys(env)) if (key.startsWith("VENDCTL_")) delete env[key];
  return { ...env, NO_COLOR: "1", VENDCTL_CONFIG_DIR: freshConfigDir(), ...overrides };
}

/** Runs vendctl to completion without a terminal (stdin is /dev/null). */
export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const proc = Bun.spawn(cliCommand(args), {
    env: env as Record<string, string>,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Runs vendctl and parses its stdout as JSON; fails with its stderr when it did not exit 0. */
export async function runJson<T = unknown>(args: string[], env: Record<string, string | undefined>): Promise<T> {
  const result = await runCli([...args, "--json"], env);
  if (result.code !== 0) throw new Error(`vendctl ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A port nothing listens on: bound once, then released. */
export function closedPort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = server.port ?? 1;
  server.stop(true);
  return port;
}
