import { and, eq, like, type SQL, sql } from "drizzle-orm";
import { transactions } from "../db/schema/index.ts";
import { normalisePhone } from "../lib/shared/destinations.ts";

const escapeLike = (value: string) => value.replace(/[\\%_]/g, "\\$&");

/** Fewer digits than this match too many destinations to be worth a substring search. */
const minimumDestinationDigits = 4;

/** The service's references (`txn_` and 24 base62 characters, newReference); the contract's pattern. */
const referenceShape = /^txn_[A-Za-z0-9]{24,}$/;

/**
 * How a search matches destinations: a whole phone number in any accepted form is that phone exactly (its
 * 11-digit form); exactly `minimumDestinationDigits` digits are the last four ("the number ending 4567", an
 * index range: `transactions_destination_last4_idx`); more digits (spaces and dashes dropped) match anywhere in it.
 */
function destinationAlternative(search: string): SQL | undefined {
  const phone = normalisePhone(search);
  if (phone) return eq(transactions.destination, phone);
  const digits = search.replace(/[\s-]/g, "");
  if (!/^\d+$/.test(digits) || digits.length < minimumDestinationDigits) return undefined;
  if (digits.length === minimumDestinationDigits) return sql`right(${transactions.destination}, 4) = ${digits}`;
  return like(transactions.destination, `%${digits}%`);
}

/**
 * What a search matches, one alternative per index: the reference exactly, the client reference by prefix
 * (both case-sensitive; `%`, `_` and backslash are plain characters), the destination (`destinationAlternative`).
 * A search that cannot be a reference (every reference has the contract's shape) reads no reference page.
 */
export function searchAlternatives(search: string): SQL[] {
  const destination = destinationAlternative(search);
  return [
    ...(referenceShape.test(search) ? [eq(transactions.reference, search)] : []),
    like(transactions.clientReference, `${escapeLike(search)}%`),
    ...(destination ? [destination] : []),
  ];
}

const newestFirst = sql`${transactions.createdAt} desc nulls last, ${transactions.id} desc nulls last`;

/**
 * `id` among the newest `count` rows of the union of the alternatives' own newest `count` (each alternative
 * with the conditions): the same rows as one `or`, but no alternative's index is given up for another's, and a
 * row matching several alternatives is there once. The ids are an array, so the rows are read by primary key.
 * One SQL text rather than a query builder per alternative: it is built on every search, and the builders
 * cost the server more than the database spends reading the reference and client-reference pages.
 */
export function amongNewestOfEach(conditions: SQL[], alternatives: SQL[], count: number): SQL {
  const pages = alternatives.map(
    (alternative) =>
      sql`(select ${transactions.id}, ${transactions.createdAt} from ${transactions} where ${and(...conditions, alternative)} order by ${newestFirst} limit ${count})`,
  );
  const union = sql.join(pages, sql` union `);
  return sql`${transactions.id} = any(array(select id from (${union}) as candidates order by created_at desc, id desc limit ${count}))`;
}
