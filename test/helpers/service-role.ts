/**
 * Statements (run as the owner, after the migrations) that give `role` what the service needs and no
 * ownership: it cannot drop or alter a table. CREATE on the database and on `drizzle` only because start-up's
 * migration step runs drizzle's `CREATE SCHEMA/TABLE IF NOT EXISTS`, whose privilege PostgreSQL checks before
 * it looks whether they exist. The same grants as the backup drill's `vend_app`.
 */
export function serviceRoleGrants(role: string, database: string): string[] {
  return [
    `create role ${role} login`,
    `grant create on database ${database} to ${role}`,
    `grant usage, create on schema drizzle to ${role}`,
    `grant select on all tables in schema drizzle to ${role}`,
    `grant usage on schema public to ${role}`,
    `grant select, insert, update, delete on all tables in schema public to ${role}`,
    `grant usage, select, update on all sequences in schema public to ${role}`,
  ];
}
