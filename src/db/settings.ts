import { eq } from "drizzle-orm";
import type { Database } from "./client.ts";
import { settings } from "./schema/index.ts";

/** A value shared by every process on this database, created by whichever process asks first. */
export async function getOrCreateSetting(db: Database, key: string, create: () => string): Promise<string> {
  await db.insert(settings).values({ key, value: create() }).onConflictDoNothing();
  const [row] = await db.select().from(settings).where(eq(settings.key, key));
  if (!row) throw new Error(`setting ${key} missing after insert`);
  return row.value;
}
