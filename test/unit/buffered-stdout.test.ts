// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bufferedStdout } from "../../src/logger.ts";
import { waitUntil } from "../helpers/wait.ts";

// The service's log destination (src/logger.ts) batches lines, and writes a lone line within a second; the
// batching must not cost a process at rest anything (it used to flush an empty buffer every second, waking
// every API and worker process to write nothing).
const dir = mkdtempSync(join(tmpdir(), "vend-buffered-stdout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("buffered log destination", () => {
  test("a quiet destination never flushes; a lone line is written within about a second, in one flush", async () => {
    const path = join(dir, "out.log");
    const destination = bufferedStdout(path);
    const flush = spyOn(destination, "flush");
    // The behaviour under test is what happens while nothing is written: 2.5 s is more than two of the
    // second-long intervals a periodic flush would run on.
    await Bun.sleep(2500);
    expect(flush).not.toHaveBeenCalled();

    const started = Date.now();
    destination.write('{"msg":"lone"}\n');
    expect(readFileSync(path, "utf8")).toBe("");
    await waitUntil(() => readFileSync(path, "utf8") === '{"msg":"lone"}\n', { what: "the lone line written" });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(flush).toHaveBeenCalledTimes(1);

    // Quiet again: no further flush.
    await Bun.sleep(1500);
    expect(flush).toHaveBeenCalledTimes(1);
  }, 15_000);
});
