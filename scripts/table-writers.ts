/**
 * Which file of src/ writes which table: every `insert into`, `update` and `delete from` in SQL text, and every
 * Drizzle `.insert(t)`, `.update(t)` and `.delete(t)`, comments left out. `bun scripts/table-writers.ts` prints
 * the table ARCHITECTURE.md keeps between its `table-writers` markers; test/unit/table-writers.test.ts holds
 * the tree to it and to the rules (only src/orders/statements/ writes `transactions` and `provider_attempts`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { getTableName, isTable } from "drizzle-orm";
import * as schema from "../src/db/schema/index.ts";

/** Table names by the name the schema exports them under (`providerAttempts` → `provider_attempts`). */
export const tablesByExport: ReadonlyMap<string, string> = new Map(
  Object.entries(schema).flatMap(([name, value]) => (isTable(value) ? [[name, getTableName(value)] as const] : [])),
);

/** Every table the service has; some are written by SQL only and have no Drizzle export. */
const knownTables = new Set([...tablesByExport.values(), "provider_anomalies", "provider_states", "provider_breakers"]);

/** The text without comments: block and line comments of TypeScript, and `--` comments of SQL. */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/(^|[^:"'`])\/\/.*$/gm, "$1")
    .replace(/--.*$/gm, "");
}

/** The tables a file's text writes. */
export function tablesWritten(text: string): Set<string> {
  const code = withoutComments(text);
  const written = new Set<string>();
  for (const match of code.matchAll(/\b(?:insert\s+into|update|delete\s+from)\s+([a-z_]+)\b/gi)) {
    const table = match[1]?.toLowerCase();
    if (table && knownTables.has(table)) written.add(table);
  }
  for (const match of code.matchAll(/\.(?:insert|update|delete)\(\s*([A-Za-z]+)\s*\)/g)) {
    const table = tablesByExport.get(match[1] ?? "");
    if (table) written.add(table);
  }
  return written;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "migrations" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Per table (sorted), the files of `root/src` that write it (sorted, relative to `root`). */
export function tableWriters(root: string): Map<string, string[]> {
  const writers = new Map<string, Set<string>>();
  for (const file of sourceFiles(join(root, "src"))) {
    for (const table of tablesWritten(readFileSync(file, "utf8"))) {
      const files = writers.get(table) ?? new Set<string>();
      files.add(relative(root, file));
      writers.set(table, files);
    }
  }
  return new Map(
    [...writers.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([table, files]) => [table, [...files].sort()]),
  );
}

/** The markdown table ARCHITECTURE.md keeps. */
export function writersTable(writers: Map<string, string[]>): string {
  const rows = [...writers.entries()].map(([table, files]) => `| \`${table}\` | ${files.map((f) => `\`${f}\``).join(", ")} |`);
  return ["| table | written by |", "| --- | --- |", ...rows].join("\n");
}

if (import.meta.main) console.log(writersTable(tableWriters(join(import.meta.dir, ".."))));
