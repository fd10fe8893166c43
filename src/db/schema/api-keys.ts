import { check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { modes } from "../../../generated/constants.ts";
import { accountAndMode } from "./accounts.ts";
import { createdAt, oneOf, timestampMs, uuidPrimaryKey } from "./columns.ts";

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuidPrimaryKey(),
    ...accountAndMode(),
    keyHash: text("key_hash").notNull(),
    prefix: text().notNull(),
    ...createdAt(),
    revokedAt: timestampMs("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.keyHash),
    index("api_keys_account_idx").on(t.accountId),
    check("api_keys_mode_check", oneOf(t.mode, modes)),
  ],
);
