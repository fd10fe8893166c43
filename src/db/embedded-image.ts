import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { migrationsDigest } from "./migration-files.ts";

/**
 * A first start on a new embedded directory spends most of its time in PGlite's initdb (4 s of 6 on an idle
 * 2-core machine, 16 s in all beside four busy processes). `npm install` makes a migrated data directory once
 * (`scripts/embedded-image.ts`, run by `postinstall`) and a first start copies it instead: no initdb, no migration.
 * The image belongs to the PGlite version and the migrations that made it (its name says which): after an upgrade,
 * a new migration or a checkout of an older tree it is not used (initdb runs, as without one) until the next
 * `npm install` makes one that matches. So a first start never gets a schema its code does not know.
 *
 * `VEND_EMBEDDED_IMAGE` names another file, or `off` for none (a first start then runs initdb, as without one).
 */
const cacheDir = join(resolve(import.meta.dir, "../.."), "node_modules", ".cache", "vend");

function defaultPath(): string | undefined {
  try {
    const manifest = Bun.resolveSync("@electric-sql/pglite/package.json", import.meta.dir);
    const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
    const name = `embedded-pglite-${version}-migrations-${migrationsDigest()}.tar`;
    return join(cacheDir, name);
  } catch {
    return undefined;
  }
}

/** Where the image is read and written; undefined when turned off. */
export function embeddedImagePath(): string | undefined {
  const given = process.env.VEND_EMBEDDED_IMAGE;
  if (given === "off") return undefined;
  return given ? resolve(given) : defaultPath();
}

/** The prepared image, if there is one for this PGlite version and these migrations. */
export async function readEmbeddedImage(): Promise<{ path: string; image: Blob } | undefined> {
  const path = embeddedImagePath();
  if (!path || !existsSync(path)) return undefined;
  const bytes = await Bun.file(path).arrayBuffer();
  return bytes.byteLength > 0 ? { path, image: new Blob([bytes]) } : undefined;
}

/**
 * Writes the image whole or not at all (a temporary file renamed into place). In the default place, the images of
 * other PGlite versions or migrations go (42 MB each).
 */
export async function writeEmbeddedImage(path: string, image: Blob): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const draft = `${path}.${process.pid}.part`;
  try {
    await Bun.write(draft, image);
    renameSync(draft, path);
  } finally {
    rmSync(draft, { force: true });
  }
  if (dirname(path) !== cacheDir) return;
  for (const name of readdirSync(cacheDir))
    if (/^embedded-pglite-.*\.tar$/.test(name) && join(cacheDir, name) !== path) rmSync(join(cacheDir, name), { force: true });
}

/** Empties a data directory a failed image left half written, keeping the files named in `keep` (its lock). */
export function clearDataDir(dataDir: string, keep: (name: string) => boolean): void {
  if (!existsSync(dataDir)) return;
  for (const name of readdirSync(dataDir)) if (!keep(name)) rmSync(join(dataDir, name), { recursive: true, force: true });
}
