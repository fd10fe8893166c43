import { io } from "./io.ts";
/**
 * A warning beside a secret the API shows only once. Always on stderr: stdout carries the data (JSON for
 * scripts), and the warning is for the person at the terminal.
 */
export function warnShownOnce(warning: string): Promise<void> {
  return new Promise((resolve) => {
    io().stderr.write(`${warning}\n`, () => resolve());
  });
}
