import { sql } from "drizzle-orm";
import type { Config } from "../../config.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { ClaimedTransaction, LeaseHold } from "./claim-due.ts";

export const countSendStatementName = "orders.count_send";

/** How many sends an order may have, and until what age (since acceptance) it may be sent again. */
export type ResendBound = Pick<Config["worker"], "maxSends" | "maxResendAgeSeconds" | "leaseSeconds">;

/** A re-send counted (`refused: false`, `sends` counting it), or refused by the bound (`sends` so far). */
export interface ResendCount {
  sends: number;
  refused: boolean;
}

/**
 * Counts a re-send before it goes out, and renews the lease so it covers the send, unless the bound refuses
 * it: the order has been sent `maxSends` times, or was accepted `maxResendAgeSeconds` or more before now.
 * The age is measured on the database's clock (the clock that stamped `created_at`), in this statement, so
 * every worker decides alike whatever its own clock says. Null when the claim is no longer this worker's:
 * the caller must not send.
 */
export async function countProviderSend(
  db: Executor,
  claim: Pick<ClaimedTransaction, "id"> & LeaseHold,
  bound: ResendBound,
): Promise<ResendCount | null> {
  const held = sql`id = ${claim.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts}::int
          and status in ('processing', 'pending')`;
  const allowed = sql`provider_sends < ${bound.maxSends}::int
          and created_at > now() - make_interval(secs => ${bound.maxResendAgeSeconds}::float8)`;
  const [row] = await queryRows<{ provider_sends: number; allowed: boolean; counted_sends: number | null }>(
    db,
    sql`${statementLabel(countSendStatementName)}with counted as (
          update transactions
          set provider_sends = provider_sends + 1, lease_expires_at = now() + make_interval(secs => ${bound.leaseSeconds})
          where ${held} and ${allowed}
          returning provider_sends
        )
        -- The row as it stood before this statement (it does not see its own update).
        select provider_sends, ${allowed} as allowed, (select provider_sends from counted) as counted_sends
        from transactions
        where ${held}`,
  );
  if (!row) return null;
  if (row.counted_sends !== null) return { sends: Number(row.counted_sends), refused: false };
  // Allowed, yet not counted: the claim was taken over between the two reads.
  return row.allowed ? null : { sends: Number(row.provider_sends), refused: true };
}
