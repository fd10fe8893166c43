import { join } from "node:path";
import { apiUrl, spawnService } from "../../test/helpers/cluster.ts";
import { childEnv, type StartedProcess, spawnProcess } from "../../test/helpers/process.ts";
import { onCleanup } from "./cleanup.ts";

export interface BenchProcess extends StartedProcess {
  /** SIGSTOP: the process does nothing until `resume` (its connections stay open). */
  pause(): void;
  resume(): void;
}

function managed(started: StartedProcess, label: string): BenchProcess {
  let paused = false;
  const bench: BenchProcess = {
    ...started,
    pause() {
      started.proc.kill("SIGSTOP");
      paused = true;
    },
    resume() {
      started.proc.kill("SIGCONT");
      paused = false;
    },
  };
  onCleanup(`stop ${label}`, async () => {
    if (paused) bench.resume();
    const stopped = started.stop("SIGTERM");
    const killer = setTimeout(() => started.proc.kill("SIGKILL"), 10_000);
    await stopped;
    clearTimeout(killer);
  });
  return bench;
}

/** This checkout, whose src/main.ts the benches run unless told another tree's. */
export const thisTree = join(import.meta.dir, "../..");

/**
 * The tree whose src/main.ts runs as the service: BENCH_SERVICE_ROOT (a checkout of an older commit with its
 * own `npm ci`, to measure it by the same bench), or this one. Such a service gets a blank database of its own
 * (`serviceDatabase`) and migrates it at its start, so it runs on its own schema.
 */
export const serviceRoot = process.env.BENCH_SERVICE_ROOT || thisTree;

/**
 * The service (`src/main.ts` of `root`) as a real process: API only or worker only; stopped at cleanup. To
 * profile one side, BENCH_API_BUN_OPTIONS or BENCH_WORKER_BUN_OPTIONS (e.g. `--cpu-prof-md
 * --cpu-prof-dir=/tmp/prof`) is given to its processes as BUN_OPTIONS; the profile is written when it stops.
 */
export function startService(
  databaseUrl: string,
  role: "api" | "worker",
  env: Record<string, string> = {},
  root = serviceRoot,
): BenchProcess {
  const profile = process.env[`BENCH_${role.toUpperCase()}_BUN_OPTIONS`];
  return managed(
    spawnService(
      databaseUrl,
      role,
      { LOG_LEVEL: "error", ...(profile ? { BUN_OPTIONS: profile } : {}), ...env },
      join(root, "src/main.ts"),
    ),
    `service ${role}${root === thisTree ? "" : ` (${root})`}`,
  );
}

/** A bench/anchors script as its own Bun process; stopped at cleanup. */
export function startAnchor(script: string, env: Record<string, string>): BenchProcess {
  return managed(spawnProcess([process.execPath, join(import.meta.dir, "../anchors", script)], childEnv(env)), script);
}

export { apiUrl };
