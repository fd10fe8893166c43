import { serviceRoleGrants as grantsOf } from "../../src/db/service-grants.ts";

/**
 * Statements (run as the owner, after the migrations) that create `role` and give it what the service needs
 * and no ownership, as `vend migrate` with DATABASE_MIGRATION_URL does: DML only, no DDL. `database` is
 * unused now that the service runs no DDL when nothing is pending; kept so callers name where it applies.
 */
export function serviceRoleGrants(role: string, _database?: string): string[] {
  return [`create role ${role} login`, ...grantsOf(role)];
}
