import { type SQL, sql } from "drizzle-orm";

/**
 * A CTE of one statement as the type checker sees it: its name and the columns it returns. A fragment that
 * reads an earlier CTE (a ledger movement, the outbox, an attempt's answer) takes it as `Cte<…the columns it
 * reads>`, so passing a CTE that lacks one of them, or naming a CTE that does not exist, is a type error
 * rather than a statement PostgreSQL refuses at run time. `Cte<"a" | "b">` is accepted where `Cte<"a">` is
 * asked for; the other way round is not.
 */
export interface Cte<Columns extends string> {
  /** The CTE's name, to write `from ${cte.name}` or `join ${cte.name} x`. */
  readonly name: SQL;
  /** Each column, qualified by the CTE's name (`txn.price_kobo`). */
  readonly column: { readonly [C in Columns]: SQL };
}

/** Declares the CTE `name` returning `columns` (its body, written by its owner, must return them). */
export function cte<const Columns extends string>(name: string, columns: readonly Columns[]): Cte<Columns> {
  const column = Object.fromEntries(columns.map((c) => [c, sql.raw(`${name}.${c}`)])) as { [C in Columns]: SQL };
  return { name: sql.raw(name), column };
}
