import { AppError } from "../errors.ts";
import { FixedWindowCounter } from "../lib/fixed-window.ts";
import { TtlCache } from "../lib/ttl-cache.ts";
import { keysIssued } from "./keys.ts";

/**
 * The budget is per address; an IPv6 client usually holds a whole /64, so that is one budget. An
 * IPv4-mapped IPv6 address is its IPv4 address.
 */
export function throttleSubject(address: string): string {
  const plain = address.split("%")[0] ?? address;
  if (!plain.includes(":")) return plain;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(plain);
  if (mapped?.[1]) return mapped[1];
  const [head = "", tail] = plain.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill("0");
  const groups = [...headGroups, ...zeros, ...tailGroups].slice(0, 4);
  return `${groups.map((group) => Number.parseInt(group || "0", 16).toString(16)).join(":")}::/64`;
}

/**
 * Per-process defences in front of authentication. A budget of failed authentications per client
 * address: over it, a request with anything but a known-good key is refused before any database work.
 * And a short memory of key hashes the database did not know, so repeating a bad key costs no query.
 */
export class AuthGuard {
  private readonly failures = new FixedWindowCounter();
  private readonly unknownKeys: TtlCache<true>;
  private keysIssuedSeen = keysIssued();

  constructor(
    private readonly failuresPerMinute: number,
    unknownKeyTtlMs = 30_000,
    maxUnknownKeys = 10_000,
  ) {
    this.unknownKeys = new TtlCache(unknownKeyTtlMs, maxUnknownKeys);
  }

  /** Throws 429 RATE_LIMITED (with Retry-After) while `address` is over its failure budget. */
  admit(address: string, now = Date.now()): void {
    if (this.failuresPerMinute <= 0) return;
    const subject = throttleSubject(address);
    if (this.failures.count(subject, now) < this.failuresPerMinute) return;
    const retryAfter = this.failures.secondsLeft(subject, now);
    throw new AppError(
      "RATE_LIMITED",
      `Too many failed authentications from this address; retry in ${retryAfter} seconds`,
      null,
      { "retry-after": String(retryAfter) },
    );
  }

  /**
   * The address's failure budget as RateLimit headers show it (the answers to requests without a usable
   * key); undefined when the budget is off.
   */
  status(
    address: string,
    now = Date.now(),
  ): { limit: number; remaining: number; resetSeconds: number; windowSeconds: number } | undefined {
    if (this.failuresPerMinute <= 0) return undefined;
    const subject = throttleSubject(address);
    return {
      limit: this.failuresPerMinute,
      remaining: Math.max(0, this.failuresPerMinute - this.failures.count(subject, now)),
      resetSeconds: this.failures.secondsLeft(subject, now, 60),
      windowSeconds: 60,
    };
  }

  recordFailure(address: string, now = Date.now()): void {
    if (this.failuresPerMinute > 0) this.failures.add(throttleSubject(address), now);
  }

  isUnknownKey(hash: string, now = Date.now()): boolean {
    this.forgetIfKeysIssued();
    return this.unknownKeys.get(hash, now) === true;
  }

  /**
   * Remembers a hash the database did not know, unless this process issued a key since the look-up
   * began (`issuedBefore`): a key issued here is never refused from memory.
   */
  rememberUnknownKey(hash: string, issuedBefore: number, now = Date.now()): void {
    this.forgetIfKeysIssued();
    if (keysIssued() === issuedBefore) this.unknownKeys.set(hash, true, now);
  }

  private forgetIfKeysIssued(): void {
    const issued = keysIssued();
    if (issued === this.keysIssuedSeen) return;
    this.unknownKeys.clear();
    this.keysIssuedSeen = issued;
  }
}
