import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * One process per embedded data directory. PGlite has no postmaster to refuse a second opener: two
 * processes on one directory each keep their own copy of the pages and overwrite each other's files.
 *
 * The lock is a file created atomically (written under a private name, then hard-linked into place, so
 * nobody ever reads it half-written) naming the holder's pid, its start time and a random token.
 * Whether the holder still runs is asked of the operating system, never inferred from a refresh timer,
 * so a process wedged with its event loop blocked still holds its directory. A holder that is gone
 * (SIGKILL, power loss) leaves a stale file that the next start takes over; racers for one stale file
 * first claim it under a name derived from its token, which exactly one of them can create.
 */

/** The lock file in a data directory (and its drafts, `vend.lock.TOKEN`). */
export const dataDirLockName = "vend.lock";

interface Holder {
  pid: number;
  /** Kernel start time of the holder (Linux), so a recycled pid is not mistaken for the holder. */
  started?: string;
  token: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `Data directory ${dataDir} is in use by another vend process (pid ${pid}); stop that process first, or set VEND_DATA_DIR to another directory`,
    );
  }
}

const unusableReasons: Record<string, string> = {
  EACCES: "is not writable by this user",
  EPERM: "does not allow writes (permissions or an immutable attribute)",
  EROFS: "is on a read-only file system",
  ENOTDIR: "has a path through something that is not a directory",
  EEXIST: "exists and is not a directory",
  ENOSPC: "is on a full disk",
};

/** The directory cannot be created or written: said in one line naming it and the setting to change. */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    readonly code: string,
  ) {
    super(
      `Data directory ${dataDir} cannot be used: it ${unusableReasons[code] ?? `cannot be written (${code})`}; set VEND_DATA_DIR to a directory this user can write`,
    );
  }
}

/** A file-system refusal (as opposed to a bug) while preparing `dataDir`, as DataDirUnusableError; anything else unchanged. */
export function asDataDirError(dataDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code && code in unusableReasons ? new DataDirUnusableError(resolve(dataDir), code) : error;
}

export interface DataDirLock {
  path: string;
  release(): void;
}

/** Paths this process holds, so a second open of one directory inside one process is refused too. */
const heldHere = new Set<string>();

/** Takes the directory's lock, or throws DataDirLockedError naming the live holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  const path = join(dir, dataDirLockName);
  if (heldHere.has(path)) throw new DataDirLockedError(dir, process.pid);
  const mine: Holder = { pid: process.pid, started: processStartTime(process.pid), token: randomBytes(12).toString("hex") };
  const draft = `${path}.${mine.token}`;
  writeFileSync(draft, JSON.stringify(mine), { flag: "wx" });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      if (tryLink(draft, path)) return held(path, mine.token);
      const holder = readHolder(path);
      if (holder === "missing") continue;
      if (holder !== "unreadable" && isRunning(holder)) throw new DataDirLockedError(dir, holder.pid);
      if (takeOver(path, holder === "unreadable" ? undefined : holder, draft)) return held(path, mine.token);
      // Another process is taking the stale file over: look again at what it leaves.
      Bun.sleepSync(25);
    }
    throw new Error(`Could not lock data directory ${dir}: ${path} keeps changing`);
  } finally {
    unlinkQuietly(draft);
  }
}

function held(path: string, token: string): DataDirLock {
  heldHere.add(path);
  return {
    path,
    release() {
      if (!heldHere.delete(path)) return;
      const now = readHolder(path);
      if (typeof now === "object" && now.token === token) unlinkQuietly(path);
    },
  };
}

/**
 * Replaces a stale lock file with ours. Only the process that creates the claim file named after the
 * stale token may replace it, and it checks the file still holds that token first, so two processes
 * finding one stale lock never both win.
 */
function takeOver(path: string, stale: Holder | undefined, draft: string): boolean {
  const staleToken = stale?.token ?? "unreadable";
  const claim = `${path}.claim-${staleToken}`;
  if (!tryLink(draft, claim)) {
    const claimant = readHolder(claim);
    if (typeof claimant === "object" && !isRunning(claimant)) {
      throw new Error(`Stale lock ${path} was being taken over by pid ${claimant.pid}, which died; remove ${path} and ${claim}`);
    }
    return false;
  }
  try {
    const now = readHolder(path);
    const stillStale = stale ? typeof now === "object" && now.token === staleToken : now === "unreadable";
    if (!stillStale) return false;
    renameSync(draft, path);
    return true;
  } finally {
    unlinkQuietly(claim);
  }
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function readHolder(path: string): Holder | "missing" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (typeof parsed.pid === "number" && Number.isInteger(parsed.pid) && parsed.pid > 0 && typeof parsed.token === "string") {
      return { pid: parsed.pid, started: typeof parsed.started === "string" ? parsed.started : undefined, token: parsed.token };
    }
  } catch {}
  return "unreadable";
}

/** The holder's pid is alive and is still the process that wrote the file. Our own pid is never a holder: we do not hold it yet. */
function isRunning(holder: Holder): boolean {
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const started = processStartTime(holder.pid);
  return !(holder.started && started && started !== holder.started);
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined where there is no /proc. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
