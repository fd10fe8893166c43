import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

export const providerCallbacks = pgTable(
  "provider_callbacks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    provider: text("provider").notNull(),
    reference: text("reference"),
    eventId: text("event_id"),
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    rawBody: text("raw_body").notNull(),
    signatureValid: boolean("signature_valid").notNull(),
    httpStatus: integer("http_status").notNull(),
    resultCode: text("result_code").notNull(),
    replayOf: uuid("replay_of"),
    receivedAt: timestampMs("received_at").notNull().default(sql`clock_timestamp()`),
  },
  (t) => [
    index("provider_callbacks_reference_idx").on(t.reference, t.receivedAt),
    index("provider_callbacks_listing_idx").on(t.receivedAt.desc(), t.id.desc()),
  ],
);
