import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configDir } from "./config.ts";
import { io } from "./io.ts";

type Env = Record<string, string | undefined>;

interface Entry {
  etag: string;
  data: unknown;
  used: number;
}

/** Answers kept; the least recently used go first. */
const maxEntries = 64;

const cachePath = (env: Env) => join(configDir(env), "catalogue-cache.json");

function readCache(env: Env): Record<string, Entry> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(cachePath(env), "utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, Entry>) : {};
  } catch {
    return {};
  }
}

/** Best effort: a cache that cannot be written only costs the next answer its body. */
function writeCache(entries: Record<string, Entry>, env: Env): void {
  const kept = Object.entries(entries)
    .sort(([, a], [, b]) => b.used - a.used)
    .slice(0, maxEntries);
  try {
    mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
    const temporary = `${cachePath(env)}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(Object.fromEntries(kept)), { mode: 0o600 });
    renameSync(temporary, cachePath(env));
  } catch {}
}

interface Answer<T> {
  data?: { data: T };
  response: Response;
}

/**
 * A catalogue read revalidated against the copy kept in the configuration directory: the copy's ETag goes in
 * `If-None-Match`, a `304` answers with the copy, a `200` replaces it. `key` names the base URL, path and filters.
 * Anything else (an error, no ETag) is returned as it came, for the caller to handle.
 */
export async function revalidated<T>(
  key: string,
  read: (etag: string | undefined) => Promise<Answer<T>>,
  env: Env = io().env,
): Promise<{ data: T | undefined; response: Response }> {
  const entries = readCache(env);
  const held = entries[key];
  const answer = await read(typeof held?.etag === "string" ? held.etag : undefined);
  const { response } = answer;
  if (response.status === 304 && held) {
    entries[key] = { ...held, used: Date.now() };
    writeCache(entries, env);
    return { data: held.data as T, response };
  }
  const etag = response.headers.get("etag");
  if (response.ok && answer.data && etag) {
    entries[key] = { etag, data: answer.data.data, used: Date.now() };
    writeCache(entries, env);
  }
  return { data: answer.data?.data, response };
}
