/**
 * Anchor of bench/vend-accept.ts: a bare Elysia server whose POST /api/v1/vend runs the 3-statement
 * accept (bare-accept-sql.ts) through the `postgres` driver, nothing else: no authentication lookup,
 * no idempotency, no validation beyond JSON parsing. The wallet is the number in the bearer token.
 * Env: DATABASE_URL, DATABASE_POOL_SIZE (the service's setting), PORT (0: any).
 */
import { Elysia } from "elysia";
import postgres from "postgres";
import { bareAccept, createBareTables } from "./bare-accept-sql.ts";

const sql = postgres(process.env.DATABASE_URL ?? "", {
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  onnotice: () => {},
});
await createBareTables(sql);

const app = new Elysia()
  .post("/api/v1/vend", async ({ headers, body, set }) => {
    const walletId = Number((headers.authorization ?? "").slice("Bearer ".length));
    const request = body as { phone_number?: string; amount_kobo?: number };
    const accepted = await bareAccept(sql, walletId, request.amount_kobo ?? 0, request.phone_number ?? "");
    set.status = accepted ? 202 : 402;
    return accepted ? { data: { status: "queued" } } : { error: { code: "insufficient_funds" } };
  })
  .listen({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1" });

console.log(`bare accept server listening on http://127.0.0.1:${app.server?.port}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    await app.stop();
    await sql.end({ timeout: 5 });
    process.exit(0);
  });
}
