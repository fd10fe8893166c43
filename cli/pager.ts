import { spawn } from "node:child_process";
import { io } from "./io.ts";

/** The pager to run: $PAGER, else `less -FRX`; none when PAGER is empty or `cat`. */
export function pagerCommand(env: NodeJS.ProcessEnv = io().env): string | undefined {
  const pager = env.PAGER === undefined ? "less -FRX" : env.PAGER.trim();
  if (pager === "" || pager === "cat") return undefined;
  return pager;
}

/**
 * Writes `text` through the pager, which shares our stdout (the terminal), and waits until it exits.
 * False when the pager could not be started, so the caller writes the text itself. A pager the user
 * quits before reading everything closes its stdin: that is not an error.
 */
export function writeThroughPager(command: string, text: string, env: NodeJS.ProcessEnv = io().env): Promise<boolean> {
  const program = command.split(/\s+/)[0] ?? "";
  if (!Bun.which(program, { PATH: env.PATH ?? "" })) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(command, {
      shell: true,
      stdio: ["pipe", "inherit", "inherit"],
      env: { LESS: "FRX", LV: "-c", ...env },
    });
    let started = false;
    child.on("spawn", () => {
      started = true;
    });
    child.on("error", () => resolve(false));
    child.on("close", () => resolve(started));
    child.stdin.on("error", () => {});
    child.stdin.end(text);
  });
}
