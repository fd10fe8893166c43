import { check, index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
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
    /** Last authenticated use, written at most once a minute per key. */
    lastUsedAt: timestampMs("last_used_at"),
    /** After this instant the key is refused (401); null: no expiry. A rolled key gets one. */
    expiresAt: timestampMs("expires_at"),
    /** CIDR blocks the key may be used from; null: any address. */
    allowedCidrs: text("allowed_cidrs").array(),
    /** The key this one replaced by a roll: a key has at most one working successor. */
    rolledFrom: uuid("rolled_from"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.keyHash),
    index("api_keys_account_idx").on(t.accountId),
    check("api_keys_mode_check", oneOf(t.mode, modes)),
  ],
);
