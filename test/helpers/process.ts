import type { Subprocess } from "bun";

/**
 * How long a started process gets to print what a test waits for (its start-up line, say). Generous on
 * purpose: a first embedded start took 18–55 s on a loaded 2-core machine, and a quick process costs nothing
 * extra. A wait that runs out fails with the process's output.
 */
export const processWaitMs = 90_000;

/** The timeout of a test that starts processes and waits for them: above `processWaitMs`, with room for its own work. */
export const processTestMs = 150_000;

export interface StartedProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr, or rejects with the output after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has exited and everything it printed has been read. */
  finished(): Promise<number>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Processes started and not yet exited: killed when the test process exits, so a failed test leaves none behind. */
const running = new Set<Subprocess>();
process.once("exit", () => {
  for (const proc of running) proc.kill("SIGKILL");
});

/** Spawns a real process (in `cwd`, else this one's) and collects its output as it arrives. */
export function spawnProcess(cmd: string[], env: Record<string, string | undefined>, cwd?: string): StartedProcess {
  const proc = Bun.spawn(cmd, { cwd, env: env as Record<string, string>, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
  };
  const pumped = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  return {
    proc,
    output: () => text,
    async waitFor(pattern, timeoutMs = processWaitMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const match = text.match(pattern);
        if (match) return match;
        if (proc.exitCode !== null) {
          // Exited: what it printed last may still be in the pipes.
          await pumped;
          const last = text.match(pattern);
          if (last) return last;
          break;
        }
        await Bun.sleep(25);
      }
      const why = proc.exitCode === null ? `not printed within ${timeoutMs} ms` : `the process exited ${proc.exitCode}`;
      // Of no use to the failing test, and nobody else would stop it.
      proc.kill("SIGKILL");
      throw new Error(`${cmd.join(" ")}: waited for ${pattern}: ${why}; its output so far:\n${text}`);
    },
    async finished() {
      const code = await proc.exited;
      await pumped;
      return code;
    },
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
}

/** The environment a child process should see: this one minus what the test must control. */
export function childEnv(overrides: Record<string, string | undefined>): Record<string, string | undefined> {
  const { DATABASE_URL: _db, PORT: _port, ADMIN_TOKEN: _admin, VEND_DATA_DIR: _dir, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: "warn", SHUTDOWN_DELAY_SECONDS: "0", ...overrides };
}
