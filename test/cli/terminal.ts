import { cliCommand } from "./cli.ts";

/** util-linux `script`, which gives vendctl a real pseudo-terminal; tests that need one skip without it. */
export const script = Bun.which("script");
export const down = "\x1b[B";
export const enter = "\r";
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what we strip
const ansi = /\x1b\[[0-9;?]*[A-Za-z]/g;

const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

export interface TerminalOptions {
  /** The terminal's size (`stty rows N cols M` before vendctl starts); the pseudo-terminal's default otherwise. */
  rows?: number;
  cols?: number;
}

/**
 * Where `text` ends in `screen` after `from`; the terminal wraps long lines, so a match may span line breaks.
 * -1 when it is not there.
 */
function endOf(screen: string, text: string, from: number): number {
  const at = screen.indexOf(text, from);
  if (at >= 0) return at + text.length;
  const positions: number[] = [];
  let flat = "";
  for (let i = from; i < screen.length; i++) {
    const char = screen[i] ?? "";
    if (char === "\r" || char === "\n") continue;
    positions.push(i);
    flat += char;
  }
  const wrapped = flat.indexOf(text);
  return wrapped < 0 ? -1 : (positions[wrapped + text.length - 1] ?? screen.length) + 1;
}

/** vendctl on a real pseudo-terminal (util-linux `script`): we read the screen and type keys. */
export function onTerminal(args: string[], environment: Record<string, string | undefined>, options: TerminalOptions = {}) {
  const command = cliCommand(args).map(shellQuote).join(" ");
  const size = [options.rows && `rows ${options.rows}`, options.cols && `cols ${options.cols}`].filter(Boolean);
  const line = size.length > 0 ? `stty ${size.join(" ")} && exec ${command}` : command;
  const proc = Bun.spawn([script ?? "script", "-qefc", line, "/dev/null"], {
    env: environment as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let raw = "";
  let seen = 0;
  const drained = (async () => {
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      raw += decoder.decode(chunk.value, { stream: true });
    }
    raw += decoder.decode();
  })();
  const screen = () => raw.replace(ansi, "");
  const type = (keys: string) => {
    proc.stdin.write(keys);
    proc.stdin.flush();
  };
  // `script` passes the signal on, so no vendctl is left behind on a dead terminal after a failed test.
  const fail = (message: string): never => {
    proc.kill("SIGTERM");
    throw new Error(`${message}; screen so far:\n${screen()}`);
  };
  /** Waits for `text` to appear after what earlier waits consumed (across line breaks the terminal wrapped in). */
  const expectPrompt = async (text: string, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const end = endOf(screen(), text, seen);
      if (end >= 0) {
        seen = end;
        return;
      }
      if (proc.exitCode !== null) break;
      await Bun.sleep(20);
    }
    fail(`no "${text}" on the terminal`);
  };
  return {
    proc,
    /** What the terminal showed, without escape sequences. */
    screen,
    /** What the terminal showed, escape sequences (colours) included. */
    rawScreen: () => raw,
    /** What appeared on the screen since the last prompt a wait consumed. */
    sinceLastPrompt: () => screen().slice(seen),
    expectPrompt,
    type,
    /** Waits for `question`, then types `keys` and Enter. */
    async answer(question: string, keys: string) {
      await expectPrompt(question);
      type(`${keys}${enter}`);
    },
    /** The exit code, once vendctl has exited and everything it wrote is on the screen. */
    async exited(timeoutMs = 30_000): Promise<number> {
      const timer = setTimeout(() => proc.kill("SIGTERM"), timeoutMs);
      const code = await proc.exited;
      clearTimeout(timer);
      await drained;
      if (proc.signalCode === "SIGTERM") fail(`vendctl still running after ${timeoutMs} ms`);
      return code;
    },
  };
}
