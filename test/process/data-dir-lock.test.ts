// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiUrl } from "../helpers/cluster.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

const main = join(import.meta.dir, "../../src/main.ts");
const racer = join(import.meta.dir, "../helpers/lock-racer.ts");
const dirs: string[] = [];
const processes: StartedProcess[] = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vend-lock-"));
  dirs.push(dir);
  return dir;
}

function start(dataDir: string): StartedProcess {
  const started = spawnProcess([process.execPath, main], childEnv({ VEND_DATA_DIR: dataDir, PORT: "0" }));
  processes.push(started);
  return started;
}

/** A pid that no process has any more. */
async function deadPid(): Promise<number> {
  const gone = Bun.spawn(["true"]);
  await gone.exited;
  return gone.pid;
}

describe("one process per embedded data directory", () => {
  test(
    "a second process on the same VEND_DATA_DIR refuses to start: exit 1, one line naming the directory and the holder's pid",
    async () => {
      const dataDir = newDir();
      const first = start(dataDir);
      const url = await apiUrl(first);
      const second = start(dataDir);
      expect(await second.proc.exited).toBe(1);
      const lines = second.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(dataDir);
      expect(lines[0]).toContain(`pid ${first.proc.pid}`);
      // The holder is unharmed and still serves.
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(await first.stop("SIGTERM")).toBe(0);
    },
    processTestMs,
  );

  test(
    "the lock of a holder killed with SIGKILL is taken over by the next start, with the data intact",
    async () => {
      const dataDir = newDir();
      const first = start(dataDir);
      await apiUrl(first);
      const [, key] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      await first.stop("SIGKILL");
      expect(JSON.parse(readFileSync(join(dataDir, "vend.lock"), "utf8")).pid).toBe(first.proc.pid);

      const next = start(dataDir);
      const url = await apiUrl(next);
      expect(next.output()).not.toContain("rg_test_");
      const wallet = await fetch(`${url}/api/v1/wallet`, { headers: { authorization: `Bearer ${key}` } });
      expect(wallet.status).toBe(200);
      expect(JSON.parse(readFileSync(join(dataDir, "vend.lock"), "utf8")).pid).toBe(next.proc.pid);
      expect(await next.stop("SIGTERM")).toBe(0);
    },
    processTestMs,
  );

  test(
    "eight processes racing to take over one stale lock: exactly one wins, the others name the winner",
    async () => {
      const dataDir = newDir();
      writeFileSync(join(dataDir, "vend.lock"), JSON.stringify({ pid: await deadPid(), token: "stale" }));
      const contenders = Array.from({ length: 8 }, () => {
        const contender = spawnProcess([process.execPath, racer, dataDir], childEnv({}));
        processes.push(contender);
        return contender;
      });
      const results = await Promise.all(contenders.map((c) => c.waitFor(/(won|refused) (\d+)/)));
      const winners = results.filter((r) => r[1] === "won");
      expect(winners).toHaveLength(1);
      const winner = Number(winners[0]?.[2]);
      for (const r of results.filter((m) => m[1] === "refused")) expect(Number(r[2])).toBe(winner);
      expect(JSON.parse(readFileSync(join(dataDir, "vend.lock"), "utf8")).pid).toBe(winner);
    },
    processTestMs,
  );
});
