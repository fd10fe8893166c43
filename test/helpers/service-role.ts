import postgres from "postgres";
import { serviceRoleGrants as grantsOf } from "../../src/db/service-grants.ts";
import { childEnv, spawnProcess } from "./process.ts";

const main = new URL("../../src/main.ts", import.meta.url).pathname;

/** The role a drill on clusters of its own runs the service as: it logs in, and owns nothing. */
export const drillServiceRole = "vend_app";

/**
 * Statements (run as the owner, after the migrations) that create `role` and give it what the service needs
 * and no ownership, as `vend migrate` with DATABASE_MIGRATION_URL does: DML only, no DDL.
 */
export function serviceRoleGrants(role: string): string[] {
  return [`create role ${role} login`, ...grantsOf(role)];
}

/** `url` (one host or several, as a failover URL names them) with `user` as its user and no password. */
export function withUser(url: string, user: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/)(?:[^@/]*@)?/, `$1${user}@`);
}

/**
 * As an operator deploys on a cluster of a drill's own: the service's role is made (logging in, owning nothing),
 * then `vend migrate` runs with the owner's URL as DATABASE_MIGRATION_URL and the service's settings (`env`, with
 * its DATABASE_URL), so it migrates as the owner and grants the service's role what it uses. Returns its output.
 */
export async function migrateAsDeployed(ownerUrl: string, env: Record<string, string>, role = drillServiceRole): Promise<string> {
  const owner = postgres(ownerUrl, { max: 1, onnotice: () => {} });
  try {
    await owner.unsafe(`do $$ begin create role ${role} login; exception when duplicate_object then null; end $$`);
  } finally {
    await owner.end({ timeout: 2 });
  }
  const migrate = spawnProcess([process.execPath, main, "migrate"], childEnv({ ...env, DATABASE_MIGRATION_URL: ownerUrl }));
  const code = await migrate.finished();
  if (code !== 0) throw new Error(`vend migrate exited ${code}: ${migrate.output()}`);
  return migrate.output();
}
