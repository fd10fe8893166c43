import { randomUUID } from "node:crypto";
import { eq, isNull, or, sql } from "drizzle-orm";
import { type Database, type DbHandle, watchingSessionName } from "../db/client.ts";
import { queryRows } from "../db/rows.ts";
import { apiKeys, operators } from "../db/schema/index.ts";
import type { Logger } from "../logger.ts";
import { CredentialRegistry, credentialsChannel, type RegisteredKey, type RegisteredOperator } from "./credential-registry.ts";

const keyColumns = {
  hash: apiKeys.keyHash,
  keyId: apiKeys.id,
  accountId: apiKeys.accountId,
  mode: apiKeys.mode,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
  allowedCidrs: apiKeys.allowedCidrs,
};
const operatorColumns = {
  hash: operators.tokenHash,
  operatorId: operators.id,
  name: operators.name,
  role: operators.role,
  revokedAt: operators.revokedAt,
};

type KeyRow = { hash: string; expiresAt: Date | null; revokedAt: Date | null } & Omit<RegisteredKey, "expiresAt" | "revokedAt">;
type OperatorRow = { hash: string; revokedAt: Date | null } & Omit<RegisteredOperator, "revokedAt">;

const registeredKey = ({ hash: _, expiresAt, revokedAt, ...row }: KeyRow): RegisteredKey => ({
  ...row,
  expiresAt: expiresAt?.getTime() ?? null,
  revokedAt: revokedAt?.getTime() ?? null,
});
const registeredOperator = ({ hash: _, revokedAt, ...row }: OperatorRow): RegisteredOperator => ({
  ...row,
  revokedAt: revokedAt?.getTime() ?? null,
});

/** Every key and operator token not yet revoked (a revocation still to take effect included): one query each. */
export async function loadCredentials(db: Database) {
  const keyRows = await db
    .select(keyColumns)
    .from(apiKeys)
    .where(or(isNull(apiKeys.revokedAt), sql`${apiKeys.revokedAt} > now()`));
  const operatorRows = await db
    .select(operatorColumns)
    .from(operators)
    .where(or(isNull(operators.revokedAt), sql`${operators.revokedAt} > now()`));
  return {
    keys: new Map(keyRows.map((row) => [row.hash, registeredKey(row)])),
    operators: new Map(operatorRows.map((row) => [row.hash, registeredOperator(row)])),
  };
}

async function readOne(db: Database, kind: "key" | "operator", hash: string) {
  if (kind === "key") {
    const [row] = await db.select(keyColumns).from(apiKeys).where(eq(apiKeys.keyHash, hash));
    return row && registeredKey(row);
  }
  const [row] = await db.select(operatorColumns).from(operators).where(eq(operators.tokenHash, hash));
  return row && registeredOperator(row);
}

export interface RegistrySync {
  registry: CredentialRegistry;
  /**
   * Resolves once every process that authenticates has applied every credential change committed before
   * the call (each answers a `sync` on the channel; they are counted by their watching sessions), or once the
   * propagation bound has passed, after which a process that has not answered is not current and asks the
   * database. What a revocation waits for before it answers.
   */
  inForce(): Promise<void>;
  stop(): Promise<void>;
}

/** How many processes keep a registry over this database: their watching sessions. */
async function countWatching(db: Database): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ${watchingSessionName}`,
  );
  return row?.n ?? 0;
}

const announce = (db: Database, payload: object) =>
  queryRows(db, sql`select pg_notify(${credentialsChannel}, ${JSON.stringify(payload)})`);

/**
 * Starts this process's credential registry: LISTENs on its own connection, loads everything, and every
 * `propagationMs / 4` sends a heartbeat on that connection (each completed one keeps the registry current
 * for a while longer). A (re)started LISTEN reloads everything; notifications that arrive meanwhile are
 * replayed over the load. `db` is read at each use, so a swapped database is used.
 */
export async function startRegistrySync(
  database: DbHandle,
  db: () => Database,
  propagationMs: number,
  logger: Logger,
): Promise<RegistrySync> {
  const registry = new CredentialRegistry(propagationMs, (kind, hash) => readOne(db(), kind, hash));
  const watch = database.watch(credentialsChannel, (payload) => registry.apply(payload));
  registry.synchronous = watch.synchronous;
  registry.onSync = (id) => {
    announce(db(), { ack: id }).catch((error: unknown) => logger.warn({ err: String(error) }, "credential sync not answered"));
  };
  let needsReload = true;
  let beating: Promise<void> | undefined;
  let stopped = false;
  let failing = false;
  const beat = async () => {
    const sentAt = Date.now();
    const { databaseMs, fresh } = await watch.heartbeat(propagationMs);
    const receivedAt = Date.now();
    if (fresh || needsReload || !registry.isLoaded) {
      needsReload = true;
      registry.beginReload();
      const loaded = await loadCredentials(db());
      registry.finishReload(loaded.keys, loaded.operators);
      needsReload = false;
    }
    registry.proven(sentAt, databaseMs, receivedAt);
  };
  const tick = () => {
    if (beating || stopped) return beating;
    beating = beat()
      .then(() => {
        if (failing) logger.info("credential registry is current again");
        failing = false;
      })
      .catch((error: unknown) => {
        if (needsReload) registry.invalidate();
        if (!failing)
          logger.warn({ err: String(error) }, "credential registry heartbeat failed; authenticating from the database");
        failing = true;
      })
      .finally(() => {
        beating = undefined;
      });
    return beating;
  };
  await tick();
  const timer = setInterval(tick, Math.max(10, Math.floor(propagationMs / 4)));
  timer.unref?.();
  return {
    registry,
    async inForce() {
      if (registry.synchronous) return;
      const started = Date.now();
      const wanted = await countWatching(db());
      const id = randomUUID();
      const remaining = Math.max(0, propagationMs - (Date.now() - started));
      const answered = registry.acknowledged(id, wanted, remaining);
      await announce(db(), { sync: id });
      await answered;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await beating;
      // No longer kept current: authentication asks the database from now on.
      registry.invalidate();
      await watch.close();
    },
  };
}

/**
 * A registry that is never current, so authentication asks the database: for a process that serves no API.
 * It answers no revocation, so waits out the bound if asked.
 */
export function idleRegistry(propagationMs: number): RegistrySync {
  return { registry: new CredentialRegistry(propagationMs), inForce: () => Bun.sleep(propagationMs), stop: async () => {} };
}
