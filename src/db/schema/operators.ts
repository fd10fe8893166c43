import { check, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { operatorRoles } from "../../../generated/constants.ts";
import { createdAt, oneOf, timestampMs, uuidPrimaryKey } from "./columns.ts";

/**
 * People who run the service. Each has a role and a token; only the token's hash is stored, as for API
 * keys. A revoked operator keeps its row, so the audit entries that name it still resolve.
 */
export const operators = pgTable(
  "operators",
  {
    id: uuidPrimaryKey(),
    name: text().notNull(),
    role: text({ enum: operatorRoles }).notNull(),
    tokenHash: text("token_hash").notNull(),
    prefix: text().notNull(),
    /** Who created it: an operator's name, or `ADMIN_TOKEN` / `bootstrap`. */
    createdBy: text("created_by").notNull(),
    ...createdAt(),
    revokedAt: timestampMs("revoked_at"),
  },
  (t) => [
    uniqueIndex("operators_name_idx").on(t.name),
    uniqueIndex("operators_token_hash_idx").on(t.tokenHash),
    check("operators_role_check", oneOf(t.role, operatorRoles)),
  ],
);
