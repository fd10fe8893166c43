import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { PGliteOptions } from "@electric-sql/pglite";
import initdbWasm from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import trgmBundle from "../../node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz" with { type: "file" };
import pgliteData from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasm from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };

/**
 * PGlite finds its WebAssembly, its file system bundle and its extensions beside its own modules. Inside
 * dist/vend (`bun build --compile`) its modules are bundled away from those files, so the build embeds them
 * (imported as files here) and the engine is handed them instead. From the source tree PGlite finds its own.
 */
const compiled = import.meta.url.startsWith("file:///$bunfs/");

/** What to add to PGlite's options: nothing from the source tree; the embedded files inside dist/vend. */
export async function embeddedArtifacts(): Promise<Pick<PGliteOptions, "pgliteWasmModule" | "initdbWasmModule" | "fsBundle">> {
  if (!compiled) return {};
  const [pglite, initdb] = await Promise.all([
    WebAssembly.compile(await Bun.file(pgliteWasm).bytes()),
    WebAssembly.compile(await Bun.file(initdbWasm).bytes()),
  ]);
  return { pgliteWasmModule: pglite, initdbWasmModule: initdb, fsBundle: Bun.file(pgliteData) };
}

/**
 * Where the pg_trgm extension's bundle is: PGlite's own URL, or inside dist/vend a copy of the embedded one in
 * a private temporary folder (PGlite reads it with a file stream, which the embedded files do not offer).
 */
export async function trgmBundleUrl(own: URL): Promise<URL> {
  if (!compiled) return own;
  const folder = mkdtempSync(join(tmpdir(), "vend-pglite-"));
  const path = join(folder, "pg_trgm.tar.gz");
  await Bun.write(path, Bun.file(trgmBundle));
  // PGlite reads the bundle once, while it starts; the folder goes when the process does.
  process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
  return pathToFileURL(path);
}
