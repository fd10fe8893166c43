import { eq } from "drizzle-orm";
import { products } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { TtlCache } from "../lib/ttl-cache.ts";

export type ProductRow = typeof products.$inferSelect;

/** The process's product cache (evicted everywhere when an operator edits a product). */
export type ProductCache = TtlCache<ProductRow>;

/** The product with this code, active or not (the caller decides). */
export async function findProduct(db: Executor, code: string): Promise<ProductRow | undefined> {
  const [row] = await db.select().from(products).where(eq(products.code, code)).limit(1);
  return row;
}
