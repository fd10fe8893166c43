import type { Executor } from "../db/transaction.ts";
import { groupCommit } from "../lib/group-commit.ts";
import { type AcceptOutcome, type AcceptRequest, acceptVends } from "./accept-vends.ts";

/** The most vends one accept statement takes (see groupCommit). */
const maxAcceptBatch = 64;

/** Accepts one vend request in its wallet's lane, together with the others that arrive while the lane is busy. */
export type AcceptLanes = (request: AcceptRequest) => Promise<AcceptOutcome>;

/**
 * Accept statements run in lanes, one statement in flight per lane: accepts arriving while their lane's
 * statement runs go together in its next one. A wallet always uses the same lane, so its accepts keep
 * their arrival order; several lanes keep several connections busy (half the pool). Each statement runs
 * on `db()` as it is then.
 */
export function acceptLanes(db: () => Executor, poolSize: number): AcceptLanes {
  const lanes = Math.max(1, Math.floor(poolSize / 2));
  const laneOf = (accountId: string) => String(Number.parseInt(accountId.slice(-8), 16) % lanes);
  const accept = groupCommit<AcceptRequest, AcceptOutcome>((_, batch) => acceptVends(db(), batch), maxAcceptBatch);
  return (request) => accept(laneOf(request.wallet.accountId), request);
}
