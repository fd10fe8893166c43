import { expect, test } from "bun:test";
import { spawnProcess } from "../helpers/process.ts";

test("a wait that runs out says why, carries the output, and stops the process (a failed test leaves none running)", async () => {
  const started = spawnProcess([process.execPath, "-e", 'console.log("starting"); setInterval(() => {}, 1000)'], process.env);
  await started.waitFor(/starting/);
  const failure = await started.waitFor(/listening on/, 300).catch((error: Error) => error);
  expect(String(failure)).toMatch(/waited for \/listening on\/: not printed within 300 ms; its output so far:\nstarting/);
  expect(await started.proc.exited).not.toBe(0);
});

test("a process that exits is read to the end: a line printed just before exiting is found", async () => {
  const started = spawnProcess([process.execPath, "-e", 'process.stdout.write("last words\\n"); process.exit(3)'], process.env);
  expect((await started.waitFor(/last words/))[0]).toBe("last words");
  expect(await started.finished()).toBe(3);
});
