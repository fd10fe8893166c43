// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTestMs, spawnProcess } from "../helpers/process.ts";

// A real full disk: a small tmpfs (needs root and mount rights, as CI has; skipped elsewhere).
const mount = mkdtempSync(join(tmpdir(), "vend-tmpfs-"));
const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=80m", "tmpfs", mount]).exitCode === 0;
const drill = join(import.meta.dir, "../helpers/storage-drill.ts");

afterAll(() => {
  if (mounted) Bun.spawnSync(["umount", mount]);
  rmSync(mount, { recursive: true, force: true });
});

type Step = { step: string; ok?: boolean; unavailable?: boolean; ms: number; rows?: number };

describe.skipIf(!mounted)("the embedded database on a disk that fills up", () => {
  test(
    "writes fail as unavailable (503), readiness fails, a PANIC stops the engine instead of wedging the process, and it recovers when space returns",
    async () => {
      const child = spawnProcess([process.execPath, drill, mount], { ...process.env });
      const timer = setTimeout(() => child.proc.kill("SIGKILL"), 45_000);
      const code = await child.proc.exited;
      clearTimeout(timer);
      const steps = new Map(
        child
          .output()
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Step)
          .map((s) => [s.step, s]),
      );
      // Killed by the timer (a wedged engine spinning at 100% CPU) shows up as a missing step and code 137.
      expect(code).toBe(0);
      expect(steps.get("probe while full")).toMatchObject({ ok: false });
      expect(steps.get("write while full")).toMatchObject({ ok: false, unavailable: true });
      expect(steps.get("checkpoint while full")).toMatchObject({ ok: false, unavailable: true });
      const read = steps.get("read after the engine failed");
      expect(read).toMatchObject({ ok: false, unavailable: true });
      expect(read?.ms).toBeLessThan(1000);
      expect(steps.get("recovered")).toMatchObject({ rows: 1 });
      expect(steps.get("recovered")?.ms).toBeLessThan(10_000);
      expect(steps.get("probe after recovery")).toMatchObject({ ok: true });
      expect(steps.has("closed")).toBe(true);
    },
    processTestMs,
  );
});
