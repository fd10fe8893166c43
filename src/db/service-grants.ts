import postgres from "postgres";

/** The user a PostgreSQL URL connects as (its first host's; every host of a failover URL uses the same). */
export function userOf(url: string): string {
  return decodeURIComponent(new URL(url.replace(/^postgres(ql)?:\/\/([^@/]*@)?[^/]*/, "postgres://$2h")).username || "");
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * What the service's role needs and nothing more, granted by the owner after the migrations: to read and write
 * the rows of every table (DML), use their sequences, call the functions its statements call (the webhook
 * endpoint rule, migration 0020: PUBLIC may call a new function unless the cluster revoked that, this grant
 * does not depend on it), read which migrations are applied. No DDL (no CREATE on the database or a schema), no
 * ownership, so neither a bug nor an injection through the service can drop or alter a table. LISTEN/NOTIFY
 * needs no grant. Idempotent.
 */
export function serviceRoleGrants(role: string): string[] {
  const to = quoted(role);
  return [
    `grant usage on schema public to ${to}`,
    `grant select, insert, update, delete on all tables in schema public to ${to}`,
    `grant usage, select, update on all sequences in schema public to ${to}`,
    `grant execute on all functions in schema public to ${to}`,
    `grant usage on schema drizzle to ${to}`,
    `grant select on all tables in schema drizzle to ${to}`,
    // Partitions and tables the owner creates later (vend partition, the next migrations) come with the grants.
    `alter default privileges in schema public grant select, insert, update, delete on tables to ${to}`,
    `alter default privileges in schema public grant usage, select, update on sequences to ${to}`,
    `alter default privileges in schema public grant execute on functions to ${to}`,
  ];
}

/** Runs the grants for `role` over the owner's connection at `ownerUrl`. */
export async function grantServiceRole(ownerUrl: string, role: string): Promise<void> {
  const sql = postgres(ownerUrl, {
    max: 1,
    onnotice: () => {},
    fetch_types: false,
    connection: { application_name: "vend-migrate" },
  });
  try {
    for (const statement of serviceRoleGrants(role)) await sql.unsafe(statement);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
