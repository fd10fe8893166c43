import { and, eq, isNull, sql } from "drizzle-orm";
import type { OperatorRole } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { operators } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError, notFound } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import { randomBase62 } from "../lib/random.ts";
import type { OperatorPrincipal } from "../lib/scope.ts";
import { sha256Hex } from "../lib/secrets.ts";

export type { OperatorPrincipal };

type Operator = components["schemas"]["Operator"];
type OperatorCreated = components["schemas"]["OperatorCreated"];
type OperatorRow = typeof operators.$inferSelect;

/** The name the bootstrap `ADMIN_TOKEN` acts under, in the audit and in `GET /admin/v1/operators/me`. */
export const bootstrapOperatorName = "ADMIN_TOKEN";

export const bootstrapOperator: OperatorPrincipal = { operatorId: null, name: bootstrapOperatorName, role: "admin" };

/**
 * The name the local bootstrap secret acts under: `vend operator create` beside a running embedded
 * server asks it, from this machine, with the secret the server left in its data directory.
 */
export const localBootstrapOperatorName = "local-bootstrap";

export const localBootstrapOperator: OperatorPrincipal = {
  operatorId: null,
  name: localBootstrapOperatorName,
  role: "admin",
};

const reservedNames = new Set([bootstrapOperatorName, localBootstrapOperatorName]);

const tokenPattern = /^op_[0-9A-Za-z]{32,}$/;

export const isOperatorToken = (token: string): boolean => tokenPattern.test(token);

export const hashOperatorToken = sha256Hex;

const presentOperator = (row: OperatorRow): Operator => ({
  id: row.id,
  name: row.name,
  role: row.role,
  prefix: row.prefix,
  created_by: row.createdBy,
  created_at: row.createdAt.toISOString(),
  revoked_at: row.revokedAt?.toISOString() ?? null,
});

/** A bootstrap principal (the ADMIN_TOKEN or the local secret) as an Operator, for `GET /admin/v1/operators/me`. */
export const presentBootstrapOperator = (name = bootstrapOperatorName): Operator => ({
  id: null,
  name,
  role: "admin",
  prefix: "",
  created_by: name,
  created_at: new Date(0).toISOString(),
  revoked_at: null,
});

/** Creates an operator; the token exists only in the answer (its SHA-256 is stored). A taken name is 409. */
export async function createOperator(
  db: Executor,
  input: { name: string; role: OperatorRole },
  createdBy: string,
): Promise<OperatorCreated> {
  if (reservedNames.has(input.name)) throw new AppError("CONFLICT", `The name ${input.name} is reserved`);
  const token = `op_${randomBase62(40)}`;
  const [row] = await db
    .insert(operators)
    .values({ name: input.name, role: input.role, tokenHash: hashOperatorToken(token), prefix: token.slice(0, 7), createdBy })
    .onConflictDoNothing({ target: operators.name })
    .returning();
  if (!row) throw new AppError("CONFLICT", `An operator named ${input.name} exists already (names are never reused)`);
  return { operator: presentOperator(row), token };
}

export async function listOperators(
  db: Executor,
  cursors: CursorCodec,
  query: { cursor?: string; limit?: number },
): Promise<Page<Operator>> {
  const request = { cursors, scope: "operators", filters: {}, query, conditions: [] };
  return readNewestFirst(db, operators, "createdAt", request, (rows) => rows.map(presentOperator));
}

/**
 * Marks an operator revoked from now (idempotent); once every process refuses its token, recordOperatorRevoked
 * moves the recorded instant to that moment.
 */
export async function revokeOperator(db: Executor, operatorId: string): Promise<{ before: Operator; after: Operator }> {
  const [before] = await db.select().from(operators).where(eq(operators.id, operatorId));
  if (!before) throw notFound("Operator");
  const [row] = await db
    .update(operators)
    .set({ revokedAt: sql`coalesce(${operators.revokedAt}, now())` })
    .where(eq(operators.id, operatorId))
    .returning();
  if (!row) throw notFound("Operator");
  return { before: presentOperator(before), after: presentOperator(row) };
}

/** The instant an operator this process revoked is refused everywhere: now. */
export async function recordOperatorRevoked(db: Executor, operatorId: string): Promise<Operator> {
  const [row] = await db.update(operators).set({ revokedAt: sql`now()` }).where(eq(operators.id, operatorId)).returning();
  if (!row) throw notFound("Operator");
  return presentOperator(row);
}

export async function getOperator(db: Executor, operatorId: string): Promise<Operator> {
  const [row] = await db.select().from(operators).where(eq(operators.id, operatorId));
  if (!row) throw notFound("Operator");
  return presentOperator(row);
}

/** The live operator a token belongs to, or undefined for an unknown or revoked one. */
export async function findOperatorByToken(db: Executor, token: string): Promise<OperatorPrincipal | undefined> {
  const [row] = await db
    .select({ id: operators.id, name: operators.name, role: operators.role })
    .from(operators)
    .where(and(eq(operators.tokenHash, hashOperatorToken(token)), isNull(operators.revokedAt)))
    .limit(1);
  return row ? { operatorId: row.id, name: row.name, role: row.role } : undefined;
}

/** Whether any operator token can authenticate now (one not revoked exists). */
export async function hasActiveOperator(db: Executor): Promise<boolean> {
  const [row] = await db.select({ id: operators.id }).from(operators).where(isNull(operators.revokedAt)).limit(1);
  return row !== undefined;
}
