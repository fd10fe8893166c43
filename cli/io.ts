import { AsyncLocalStorage } from "node:async_hooks";
import type { Readable, Writable } from "node:stream";

/** An output stream and what the CLI asks of it: is it a terminal, and how big. */
export type OutputStream = Writable & { isTTY?: boolean; columns?: number; rows?: number };

/**
 * Everything vendctl reads from or writes to outside its arguments. The launcher uses the real process's;
 * tests run `main()` in their own process with their own, so no command may reach for `process.stdout`,
 * `process.env` or `process.stdin` itself.
 */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** The real process's streams and environment. */
export const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

/** The io of the run in progress; AsyncLocalStorage keeps it through every await without passing it around. */
const current = new AsyncLocalStorage<CliIo>();

/** The current run's io: the real process's outside `withIo`. */
export const io = (): CliIo => current.getStore() ?? processIo();

/** Runs `work` (and everything it awaits) with `cliIo` as the io. */
export const withIo = <T>(cliIo: CliIo, work: () => T): T => current.run(cliIo, work);
