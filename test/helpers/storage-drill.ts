import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { queryRows } from "../../src/db/rows.ts";
import { isDatabaseUnavailable } from "../../src/db/unavailable.ts";

/**
 * Run by test/process/embedded-storage.test.ts in its own process, on a small tmpfs: a wedged engine
 * would hold this process's only thread, and the test must be able to see that and kill it.
 * Prints one JSON line per step.
 */
const mount = process.argv[2] ?? "";
const filler = join(mount, "filler");
const report = (step: string, fields: Record<string, unknown>) => console.log(JSON.stringify({ step, ...fields }));
const outcome = async (run: () => Promise<unknown>) => {
  const started = performance.now();
  try {
    await run();
    return { ok: true, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, unavailable: isDatabaseUnavailable(error), ms: performance.now() - started };
  }
};

const handle = await openDatabase({ dataDir: join(mount, "data") });
await runMigrations(handle);
await handle.db.execute(sql`insert into accounts (name) values ('before the disk filled')`);
const fd = openSync(filler, "w");
try {
  for (const block = new Uint8Array(1 << 20); ; ) writeSync(fd, block);
} catch {}
closeSync(fd);

report("probe while full", await outcome(() => handle.probe(2000)));
report(
  "write while full",
  await outcome(() => handle.db.execute(sql`insert into accounts (name) select 'n' || g from generate_series(1, 20000) g`)),
);
report("checkpoint while full", await outcome(() => handle.db.execute(sql`checkpoint`)));
report("read after the engine failed", await outcome(() => handle.db.execute(sql`select 1`)));
unlinkSync(filler);
const freed = performance.now();
let rows: unknown[] = [];
while (performance.now() - freed < 20_000) {
  const read = await queryRows(handle.db, sql`select name from accounts where name = 'before the disk filled'`).catch(
    () => undefined,
  );
  if (read) {
    rows = read;
    break;
  }
  await Bun.sleep(100);
}
report("recovered", { ms: performance.now() - freed, rows: rows.length });
report("probe after recovery", await outcome(() => handle.probe(2000)));
await handle.close();
report("closed", {});
