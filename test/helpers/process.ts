import type { Subprocess } from "bun";

export interface StartedProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Spawns a real process and collects its output as it arrives. */
export function spawnProcess(cmd: string[], env: Record<string, string | undefined>): StartedProcess {
  const proc = Bun.spawn(cmd, { env: env as Record<string, string>, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  return {
    proc,
    output: () => text,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const match = text.match(pattern);
        if (match) return match;
        if (proc.exitCode !== null) break;
        await Bun.sleep(25);
      }
      throw new Error(`timed out waiting for ${pattern}; output so far:\n${text}`);
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
  return { ...rest, LOG_LEVEL: "warn", ...overrides };
}
