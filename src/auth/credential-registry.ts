import type { OperatorRole } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import type { Mode, OperatorPrincipal } from "../lib/scope.ts";

/** An API key as authentication needs it. Instants are epoch milliseconds on the database's clock. */
export interface RegisteredKey {
  keyId: string;
  accountId: string;
  mode: Mode;
  /** Null: never expires. */
  expiresAt: number | null;
  /** When the revocation takes effect; null: not revoked. */
  revokedAt: number | null;
  /** Canonical CIDR blocks; null: any address. */
  allowedCidrs: string[] | null;
}

export interface RegisteredOperator extends OperatorPrincipal {
  revokedAt: number | null;
}

/**
 * One change as the `vend_credentials` notification carries it (migration 0011), or a process's question
 * and the others' answers: `sync` asks every registry to say it has applied everything committed before it
 * (notifications arrive in commit order), `ack` is that answer.
 */
interface Announcement {
  sync?: string;
  ack?: string;
  kind: "key" | "operator";
  hash: string;
  deleted?: boolean;
  reload?: boolean;
  id?: string;
  account_id?: string;
  mode?: Mode;
  name?: string;
  role?: OperatorRole;
  expires_at?: number | null;
  revoked_at?: number | null;
  allowed_cidrs?: string[] | null;
}

export const credentialsChannel = "vend_credentials";

/** Requests waiting for the next heartbeat before an unknown hash is refused; past this, refused at once. */
const maxWaiters = 10_000;

/**
 * Every usable API key and operator token of the database, by hash, in this process's memory: loaded whole
 * when the listening connection (re)starts, kept current by the notification each change sends in its own
 * transaction. It is CURRENT while a heartbeat on the listening connection, sent less than 3/4 of the
 * propagation bound ago, has completed (PostgreSQL hands over every notification committed before a query
 * before answering it): then it holds every change committed more than that long ago, so a request it lets
 * through is at most `propagationMs` minus a margin behind the database, and the margin covers the time
 * between a change's `now()` and its commit. When it is not current, authentication asks the database.
 */
export class CredentialRegistry {
  private keys = new Map<string, RegisteredKey>();
  private operators = new Map<string, RegisteredOperator>();
  private loaded = false;
  private buffered: Announcement[] | undefined;
  private pendingReads = 0;
  private provenAt = Number.NEGATIVE_INFINITY;
  private offsetMs = 0;
  private uncertaintyMs = 0;
  private waiters: { after: number; resolve: () => void }[] = [];
  private acks = new Map<string, { count: number; wanted: number; resolve: () => void }>();
  /** Notifications arrive with the committing statement's answer (embedded): memory is never behind. */
  synchronous = false;
  /** Told the id of each `sync` once everything before it is applied here: the process answers with an `ack`. */
  onSync: (id: string) => void = () => {};

  constructor(
    readonly propagationMs: number,
    /** Re-reads one credential whose announcement was too large to carry it. */
    private readonly readOne: (
      kind: "key" | "operator",
      hash: string,
    ) => Promise<RegisteredKey | RegisteredOperator | undefined> = async () => undefined,
  ) {}

  /** True while this process may answer from memory alone. */
  isCurrent(now = Date.now()): boolean {
    if (!this.loaded || this.buffered !== undefined || this.pendingReads > 0) return false;
    return this.synchronous || now - this.provenAt < (this.propagationMs * 3) / 4;
  }

  /** The database's clock now, as last measured, erring late (so an expiry is never honoured past its time). */
  databaseNow(now = Date.now()): number {
    return now + this.offsetMs + this.uncertaintyMs;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  apiKey(hash: string): RegisteredKey | undefined {
    return this.keys.get(hash);
  }

  operator(hash: string): RegisteredOperator | undefined {
    return this.operators.get(hash);
  }

  get size(): { keys: number; operators: number } {
    return { keys: this.keys.size, operators: this.operators.size };
  }

  /**
   * A heartbeat sent at `sentAt` (local clock) answered with the database's clock `databaseMs` at
   * `receivedAt`: every change committed before `sentAt` is here.
   */
  proven(sentAt: number, databaseMs: number, receivedAt: number): void {
    if (sentAt > this.provenAt) this.provenAt = sentAt;
    const ready = this.waiters.filter((waiter) => waiter.after <= this.provenAt);
    this.waiters = this.waiters.filter((waiter) => waiter.after > this.provenAt);
    for (const waiter of ready) waiter.resolve();
    const roundTrip = Math.max(0, receivedAt - sentAt);
    this.offsetMs = databaseMs - (sentAt + receivedAt) / 2;
    this.uncertaintyMs = roundTrip / 2;
  }

  /**
   * Resolves once a heartbeat sent at or after `after` has completed, or after the propagation bound: then
   * a credential created before `after` on any process is here. No database work: it waits for the next
   * periodic heartbeat. Used before refusing a hash this process does not know.
   */
  caughtUpWith(after: number): Promise<void> {
    if (this.synchronous || this.provenAt >= after || this.waiters.length >= maxWaiters) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.propagationMs);
      this.waiters.push({
        after,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /**
   * Resolves once `wanted` registries (this one included) have answered the `sync` named `id`, or after
   * `timeoutMs`, whichever comes first; true when all answered.
   */
  acknowledged(id: string, wanted: number, timeoutMs: number): Promise<boolean> {
    if (wanted <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.acks.delete(id);
        resolve(false);
      }, timeoutMs);
      this.acks.set(id, {
        count: 0,
        wanted,
        resolve: () => {
          clearTimeout(timer);
          this.acks.delete(id);
          resolve(true);
        },
      });
    });
  }

  /** The listening connection was lost or a load failed: answer from the database until reloaded. */
  invalidate(): void {
    this.loaded = false;
    this.buffered = undefined;
    this.provenAt = Number.NEGATIVE_INFINITY;
  }

  /** From now until `finishReload`, announcements are kept and replayed over the loaded state. */
  beginReload(): void {
    this.buffered = [];
  }

  finishReload(keys: Map<string, RegisteredKey>, operators: Map<string, RegisteredOperator>): void {
    const replay = this.buffered ?? [];
    this.keys = keys;
    this.operators = operators;
    this.buffered = undefined;
    for (const announcement of replay) this.applyAnnouncement(announcement);
    this.loaded = true;
  }

  /** Applies one `vend_credentials` payload. */
  apply(payload: string): void {
    let announcement: Announcement;
    try {
      announcement = JSON.parse(payload) as Announcement;
    } catch {
      return;
    }
    if (announcement.ack !== undefined) {
      const waiting = this.acks.get(announcement.ack);
      if (waiting && ++waiting.count >= waiting.wanted) waiting.resolve();
      return;
    }
    if (this.buffered) this.buffered.push(announcement);
    else this.applyAnnouncement(announcement);
  }

  /**
   * A change this process made, known here at once, before its notification comes back. It only ever
   * tightens what is known (the earlier expiry and revocation win), so arriving after a newer change's
   * notification cannot undo that change; the allow-list is the one given.
   */
  knowKey(hash: string, key: RegisteredKey): void {
    const known = this.keys.get(hash);
    if (!known) {
      this.keys.set(hash, key);
      return;
    }
    const earlier = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
    this.keys.set(hash, {
      ...key,
      expiresAt: earlier(known.expiresAt, key.expiresAt),
      revokedAt: earlier(known.revokedAt, key.revokedAt),
    });
  }

  /** An operator this process revoked: refused here at once (operators are few; found by id). */
  knowOperatorRevoked(operatorId: string, revokedAt: number): void {
    for (const [hash, operator] of this.operators) {
      if (operator.operatorId === operatorId && (operator.revokedAt === null || operator.revokedAt > revokedAt))
        this.operators.set(hash, { ...operator, revokedAt });
    }
  }

  private applyAnnouncement(a: Announcement): void {
    if (a.sync !== undefined) {
      // Re-reads still under way hold changes this registry has not applied yet: answer once they are in.
      this.afterRereads(() => this.onSync(a.sync as string));
      return;
    }
    if (a.reload) {
      this.reread(a.kind, a.hash);
      return;
    }
    if (a.kind === "key") {
      if (a.deleted || !a.id || !a.account_id || !a.mode) this.keys.delete(a.hash);
      else
        this.keys.set(a.hash, {
          keyId: a.id,
          accountId: a.account_id,
          mode: a.mode,
          expiresAt: a.expires_at ?? null,
          revokedAt: a.revoked_at ?? null,
          allowedCidrs: a.allowed_cidrs ?? null,
        });
      return;
    }
    if (a.deleted || !a.id || !a.name || !a.role) this.operators.delete(a.hash);
    else this.operators.set(a.hash, { operatorId: a.id, name: a.name, role: a.role, revokedAt: a.revoked_at ?? null });
  }

  private rereadsDone: (() => void)[] = [];

  private afterRereads(step: () => void): void {
    if (this.pendingReads === 0) step();
    else this.rereadsDone.push(step);
  }

  private reread(kind: "key" | "operator", hash: string): void {
    this.pendingReads += 1;
    this.readOne(kind, hash)
      .then((found) => {
        const map: Map<string, RegisteredKey | RegisteredOperator> = kind === "key" ? this.keys : this.operators;
        if (found) map.set(hash, found);
        else map.delete(hash);
      })
      .catch(() => this.invalidate())
      .finally(() => {
        this.pendingReads -= 1;
        if (this.pendingReads === 0) for (const step of this.rereadsDone.splice(0)) step();
      });
  }
}

/** Whether a registered credential still works at `databaseNow`. */
export const stillWorks = (credential: { revokedAt: number | null; expiresAt?: number | null }, databaseNow: number): boolean =>
  (credential.revokedAt === null || credential.revokedAt > databaseNow) &&
  (credential.expiresAt === undefined || credential.expiresAt === null || credential.expiresAt > databaseNow);

const instant = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

/** Tells the registry about a key this process changed (as the API presents it), with its hash. */
export function knowChangedKey(
  registry: CredentialRegistry,
  change: { hash: string; key: components["schemas"]["ApiKey"] },
): void {
  const { key } = change;
  registry.knowKey(change.hash, {
    keyId: key.id,
    accountId: key.account_id,
    mode: key.mode,
    expiresAt: instant(key.expires_at),
    revokedAt: instant(key.revoked_at),
    allowedCidrs: key.allowed_ips ?? null,
  });
}
