import { io } from "./io.ts";
import type { Column, Printer } from "./output.ts";

/**
 * A warning beside a secret the API shows only once. Always on stderr: stdout carries the data (JSON for
 * scripts), and the warning is for the person at the terminal.
 */
export function warnShownOnce(warning: string): Promise<void> {
  return new Promise((resolve) => {
    io().stderr.write(`${warning}\n`, () => resolve());
  });
}

/** How `recordCommand` shows a created thing with a secret: the record, then the warning to save it now. */
export function shownOnce<T>(columns: Column<T>[], warning: string) {
  return async (printer: Printer, created: T): Promise<void> => {
    await printer.record(created, columns);
    await warnShownOnce(warning);
  };
}
