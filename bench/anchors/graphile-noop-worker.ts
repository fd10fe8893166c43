/**
 * Anchor of bench/processing.ts: a graphile-worker runner with its default settings (one job at a time,
 * LISTEN/NOTIFY plus a 2 s poll) whose one task, `noop`, does nothing. Its logger prints errors only, as
 * the service runs at LOG_LEVEL=error. Env: DATABASE_URL (the schema is installed by the bench first).
 */
import { Logger, run } from "graphile-worker";

const logger = new Logger(() => (level, message) => {
  if (level === "error") console.error(message);
});

const runner = await run({
  connectionString: process.env.DATABASE_URL ?? "",
  logger,
  taskList: { noop: async () => {} },
});
console.log("graphile worker running");
await runner.promise;
