import { chmodSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Makes a data directory private to its user: the directory and its sub-directories `0700`, its files
 * `0600`. PGlite's file system creates every file `0666` whatever the umask (it sets the modes PostgreSQL's
 * emulation asks for, and those of the image it unpacks), so the embedded directory is swept when it is
 * opened and again when it is closed; in between, the `0700` directory keeps other users out of what it
 * creates. Symbolic links are left alone.
 */
export function makePrivate(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    for (const name of readdirSync(path)) makePrivate(join(path, name));
  } else if ((stat.mode & 0o777) !== 0o600) {
    chmodSync(path, 0o600);
  }
}
