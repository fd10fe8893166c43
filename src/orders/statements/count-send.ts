import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { ClaimedTransaction, LeaseHold } from "./claim-due.ts";

export const countSendStatementName = "orders.count_send";

/**
 * Counts a re-send before it goes out, and renews the lease so it covers the send. Null when the
 * claim is no longer this worker's: the caller must not send.
 */
export async function countProviderSend(
  db: Executor,
  claim: Pick<ClaimedTransaction, "id"> & LeaseHold,
  leaseSeconds: number,
): Promise<number | null> {
  const [row] = await queryRows<{ provider_sends: number }>(
    db,
    sql`${statementLabel(countSendStatementName)}update transactions
        set provider_sends = provider_sends + 1, lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
        where id = ${claim.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts}
          and status in ('processing', 'pending')
        returning provider_sends`,
  );
  return row ? Number(row.provider_sends) : null;
}
