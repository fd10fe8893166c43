import { boolean, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { insertedAt, uuidPrimaryKey } from "./columns.ts";

export const providerCallbacks = pgTable(
  "provider_callbacks",
  {
    id: uuidPrimaryKey(),
    provider: text().notNull(),
    reference: text(),
    eventId: text("event_id"),
    headers: jsonb().$type<Record<string, string>>().notNull(),
    rawBody: text("raw_body").notNull(),
    signatureValid: boolean("signature_valid").notNull(),
    httpStatus: integer("http_status").notNull(),
    resultCode: text("result_code").notNull(),
    replayOf: uuid("replay_of"),
    receivedAt: insertedAt("received_at", "clock"),
  },
  (t) => [
    index("provider_callbacks_reference_idx").on(t.reference, t.receivedAt),
    index("provider_callbacks_listing_idx").on(t.receivedAt.desc(), t.id.desc()),
  ],
);
