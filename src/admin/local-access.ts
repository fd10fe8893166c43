import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBase62 } from "../lib/random.ts";

/**
 * How tools on this machine reach a running embedded server: its local URL and a random secret, in a
 * file (mode 0600) in the data directory it holds locked. Whoever can read that directory can read the
 * database itself, so the file gives nobody anything new. The server accepts the secret as the admin
 * bearer (`local-bootstrap`) only from a loopback peer, and removes the file when it stops.
 */
export interface LocalAccess {
  pid: number;
  url: string;
  secret: string;
}

const fileName = "vend.local.json";

/** The URL a local tool should use for a server listening at `url`, or undefined when it does not listen on loopback. */
export function localUrlOf(url: string): string | undefined {
  const parsed = new URL(url);
  if (parsed.hostname === "0.0.0.0") parsed.hostname = "127.0.0.1";
  if (parsed.hostname === "[::]") parsed.hostname = "[::1]";
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const loopback = host === "::1" || host === "localhost" || /^127\./.test(host);
  return loopback ? parsed.origin : undefined;
}

/** Writes a fresh file for this process; `remove` deletes it if it is still ours. */
export function writeLocalAccess(dataDir: string, url: string): { secret: string; remove(): void } {
  const path = join(dataDir, fileName);
  const access: LocalAccess = { pid: process.pid, url, secret: `vlocal_${randomBase62(43)}` };
  try {
    unlinkSync(path);
  } catch {}
  // A new file ("wx") gets the mode asked for; an old one could have kept wider permissions.
  writeFileSync(path, `${JSON.stringify(access)}\n`, { mode: 0o600, flag: "wx" });
  return {
    secret: access.secret,
    remove() {
      if (readLocalAccess(dataDir)?.secret !== access.secret) return;
      try {
        unlinkSync(path);
      } catch {}
    },
  };
}

/** The running server's access file, or undefined when there is none (or it is unreadable). */
export function readLocalAccess(dataDir: string): LocalAccess | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, fileName), "utf8")) as Partial<LocalAccess>;
    if (typeof parsed.pid === "number" && typeof parsed.url === "string" && typeof parsed.secret === "string") {
      return { pid: parsed.pid, url: parsed.url, secret: parsed.secret };
    }
  } catch {}
  return undefined;
}
