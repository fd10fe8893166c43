import { UsageError } from "./errors.ts";

const hasScheme = (raw: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(raw);

function parse(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** The URL as it can be shown: a user name or password in it is replaced. */
function shown(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1…@");
}

/**
 * Checks a base URL and returns it without trailing slashes; `from` names where it came from
 * (`--base-url`, `VENDCTL_BASE_URL`, a profile), so the message says what to fix and where.
 */
export function checkBaseUrl(raw: string, from: string): string {
  const problem = (what: string): UsageError => new UsageError(`base URL "${shown(raw)}" (from ${from}) ${what}`);
  const trimmed = raw.trim();
  if (trimmed === "") throw problem("is empty; give one like http://localhost:8080");
  const url = parse(trimmed);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    const guess = hasScheme(trimmed) ? undefined : parse(`http://${trimmed}`);
    const hint = guess?.hostname ? `; try http://${trimmed.replace(/\/+$/, "")}` : "; give one like http://localhost:8080";
    throw problem(`is not an http:// or https:// URL${hint}`);
  }
  if (url.username || url.password) {
    throw problem("must not contain a user name or password; pass credentials with --api-key or --admin-token");
  }
  if (url.search || url.hash) throw problem("must not have a query or fragment (?… or #…)");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}
