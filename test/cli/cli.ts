import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { main } from "../../cli/index.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { childEnv } from "../helpers/process.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

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

/** Collects what vendctl writes, as it writes it; not a terminal. */
class Capture extends Writable {
  text = "";
  constructor(private readonly written: (text: string) => void) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    const text = chunk.toString("utf8");
    this.text += text;
    this.written(text);
    done();
  }
}

/**
 * Local time comes from the process's TZ, which the CLI in this process shares: the run's TZ is set for its
 * duration, as a spawned vendctl would have it.
 */
async function inTimeZone<T>(tz: string | undefined, work: () => Promise<T>): Promise<T> {
  const before = process.env.TZ;
  if (tz === undefined || tz === before) return work();
  process.env.TZ = tz;
  try {
    return await work();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

export interface StartCliOptions {
  /** What stdin holds (empty by default). */
  input?: string;
  /** Called with each piece of stdout as vendctl writes it. */
  onStdout?: (text: string) => void;
}

/** A vendctl run in progress in this process. */
export interface RunningCli {
  /** stdout and stderr so far, in the order they were written. */
  output(): string;
  /** The first match of `pattern` in the output; fails after `timeoutMs` when it has not appeared. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  done: Promise<CliResult>;
}

/**
 * Starts vendctl in this process (no start-up cost) without a terminal: stdin is empty unless `input` is
 * given, stdout and stderr are captured, `env` is its whole environment.
 */
export function startCli(args: string[], env: Record<string, string | undefined>, options: StartCliOptions = {}): RunningCli {
  let both = "";
  const stdout = new Capture((text) => {
    both += text;
    options.onStdout?.(text);
  });
  const stderr = new Capture((text) => {
    both += text;
  });
  const stdin = Readable.from(options.input ? [Buffer.from(options.input)] : []);
  const io = { stdout, stderr, stdin, env: { ...env } };
  let finished = false;
  const done = inTimeZone(env.TZ, () => main(cliCommand(args), io)).then((code) => {
    finished = true;
    return { code, stdout: stdout.text, stderr: stderr.text };
  });
  return {
    output: () => both,
    waitFor(pattern, timeoutMs = 20_000) {
      const what = `vendctl ${args.join(" ")}: ${pattern} in its output`;
      return waitUntil(
        () => {
          const match = both.match(pattern);
          if (!match && finished) throw new Error(`${what}: not before it exited:\n${both}`);
          return match;
        },
        { what, timeoutMs, intervalMs: 25, detail: () => both },
      );
    },
    done,
  };
}

/** Runs vendctl to completion in this process (see `startCli`). */
export function runCli(args: string[], env: Record<string, string | undefined>, input = ""): Promise<CliResult> {
  return startCli(args, env, { input }).done;
}

/** Runs a command to completion without a terminal (stdin is /dev/null); not spawnSync, so a server in this process answers. */
export async function runCommand(command: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const proc = Bun.spawn(command, {
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

/**
 * A target that takes each connection and drops it at once, held open until `close()`: a forward to it fails
 * at once, and, unlike a released port, nothing else can start listening there (a slow one would hang the forward).
 */
export async function droppingTarget(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on: bound once, then released. */
export function closedPort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = server.port ?? 1;
  server.stop(true);
  return port;
}

type Env = Record<string, string | undefined>;

export interface CliServerOptions {
  /** Configuration for the server (`startTestServer`'s overrides), e.g. `fastProcessing()`. */
  config?: Parameters<typeof startTestServer>[0];
  /** A funded account whose test key `apiEnv` uses: its name and balance in kobo. */
  account?: { name: string; kobo: number };
  /** Added to both environments, e.g. TERM and COLUMNS for a pseudo-terminal. */
  env?: Env;
}

/**
 * A test server for the file (started before its tests, closed after them with the configuration directories),
 * an optional funded account, and vendctl's environments for its API key and for the admin token.
 */
export function cliServer(options: CliServerOptions = {}) {
  let server: TestServer | undefined;
  let account: Awaited<ReturnType<typeof fundedAccount>> | undefined;
  let api: Env | undefined;
  let admin: Env | undefined;
  beforeAll(async () => {
    server = await startTestServer(options.config);
    if (options.account) account = await fundedAccount(server, options.account.kobo, options.account.name);
  });
  afterAll(async () => {
    removeConfigDirs();
    await server?.close();
  });
  const started = (): TestServer => {
    if (!server) throw new Error("cliServer: the server starts in beforeAll");
    return server;
  };
  const funded = () => {
    if (!account) throw new Error("cliServer: no account asked for (options.account)");
    return account;
  };
  return {
    get server() {
      return started();
    },
    get account() {
      return funded();
    },
    /** The environment for the account's test key (the same object on every call). */
    apiEnv(): Env {
      api ??= cliEnv({ VENDCTL_BASE_URL: started().url, VENDCTL_API_KEY: funded().testKey, ...options.env });
      return api;
    },
    /** The environment for the admin token (the same object on every call). */
    adminEnv(): Env {
      admin ??= cliEnv({ VENDCTL_BASE_URL: started().url, VENDCTL_ADMIN_TOKEN: testAdminToken, ...options.env });
      return admin;
    },
  };
}
