/**
 * Every bench runs its body through `runBench`: whatever it registered with `onCleanup` (processes to stop,
 * databases to drop) runs at the end, on an error, and on Ctrl-C or SIGTERM, newest first.
 */
type Task = { label: string; run: () => Promise<unknown> };

const tasks: Task[] = [];
let cleaning: Promise<void> | undefined;

/** True once cleanup has begun: load loops stop sending. */
export function stopping(): boolean {
  return cleaning !== undefined;
}

export function onCleanup(label: string, run: () => Promise<unknown>): void {
  tasks.push({ label, run });
}

async function withTimeout(task: Task, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([task.run(), timeout]);
  } catch (error) {
    console.error(`cleanup "${task.label}" failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (let task = tasks.pop(); task; task = tasks.pop()) await withTimeout(task, 20_000);
  })();
  return cleaning;
}

export async function runBench(body: () => Promise<void>): Promise<void> {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    await body();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
  // A timer left by in-process service code (health refresh, waiters) must not keep a finished bench alive.
  process.exit();
}

/** Exits with a message when the bench needs PostgreSQL and DATABASE_URL is not set. */
export function requirePostgres(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("Set DATABASE_URL to a PostgreSQL server (the bench creates and drops its own databases).");
    process.exit(2);
  }
  return url;
}

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number, got ${raw}`);
    process.exit(2);
  }
  return value;
}
