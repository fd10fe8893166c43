/**
 * Writes the reference pages generated from the code: docs/configuration.md (scripts/configuration-page.ts) and
 * docs/cli/ (scripts/cli-pages.ts). `--check` writes nothing and fails when a committed page differs from a fresh one,
 * or when docs/cli/ holds a page no command has.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPages } from "./cli-pages.ts";
import { configurationPage } from "./configuration-page.ts";

const docs = join(import.meta.dir, "..", "docs");

/** Every generated page, by its path under docs/. */
export async function generatedPages(): Promise<Map<string, string>> {
  const pages = new Map([["configuration.md", configurationPage()]]);
  for (const [name, text] of await cliPages()) pages.set(`cli/${name}`, text);
  return pages;
}

function committedCliPages(): string[] {
  try {
    return readdirSync(join(docs, "cli")).map((name) => `cli/${name}`);
  } catch {
    return [];
  }
}

function readOrNothing(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The pages under docs/ that differ from a fresh generation: changed, missing, or left over. */
export async function stalePages(): Promise<string[]> {
  const pages = await generatedPages();
  const changed = [...pages].filter(([path, text]) => readOrNothing(join(docs, path)) !== text).map(([path]) => path);
  const leftOver = committedCliPages().filter((path) => !pages.has(path));
  return [...changed, ...leftOver].map((path) => `docs/${path}`);
}

if (import.meta.main) {
  if (process.argv.includes("--check")) {
    const stale = await stalePages();
    if (stale.length > 0) {
      console.error(`Generated docs are stale; run \`npm run generate:docs\`. Differs: ${stale.join(", ")}`);
      process.exit(1);
    }
    console.log("docs/configuration.md and docs/cli/ are up to date");
  } else {
    const pages = await generatedPages();
    rmSync(join(docs, "cli"), { recursive: true, force: true });
    mkdirSync(join(docs, "cli"), { recursive: true });
    for (const [path, text] of pages) writeFileSync(join(docs, path), text);
    console.log(`docs/configuration.md and docs/cli/ (${pages.size - 1} pages) written`);
  }
}
