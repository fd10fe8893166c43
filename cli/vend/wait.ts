import { terminalStatuses } from "../../src/lib/shared/statuses.ts";
import { unwrap, type VendClient } from "../client.ts";
import { progress } from "../progress.ts";
import { tell } from "../prompt.ts";
import type { Transaction } from "../views.ts";

const stopAt = new Set<string>(terminalStatuses);
/** Each long-poll is this short, so the status on the spinner (queued → pending) is at most this old. */
const sliceSeconds = 3;
/** Poll no faster than this even when the server answers a long-poll at once (MAX_WAIT_SECONDS=0). */
const minimumPollMs = 1000;

export const isFinal = (transaction: Transaction): boolean => stopAt.has(transaction.status);

/**
 * Long-polls the transaction (GET /api/v1/transactions/{reference}?wait=…) until it is final or `seconds`
 * have passed, showing its status and the seconds waited on a spinner (stderr, terminals only).
 */
export async function waitForFinal(
  client: VendClient,
  accepted: Transaction,
  seconds: number,
): Promise<{ transaction: Transaction; waitedSeconds: number }> {
  let transaction = accepted;
  if (seconds <= 0 || isFinal(transaction)) return { transaction, waitedSeconds: 0 };
  const started = Date.now();
  const deadline = started + seconds * 1000;
  const text = () =>
    `Waiting for a final status: ${transaction.status}, ${Math.floor((Date.now() - started) / 1000)}s of ${seconds}s`;
  const spinner = progress(text());
  const ticker = setInterval(() => spinner.update(text()), 1000);
  let stoppedBy: string | undefined;
  try {
    const reference = accepted.reference;
    for (let remaining = deadline - Date.now(); remaining > 200; remaining = deadline - Date.now()) {
      const polled = Date.now();
      const wait = Math.min(sliceSeconds, Math.ceil(remaining / 1000));
      const polling = unwrap(
        client.GET("/api/v1/transactions/{reference}", { params: { path: { reference }, query: { wait } } }),
      );
      // The vend is accepted whatever happens to the wait: it is printed as last seen, not replaced by an error.
      const latest = await polling.catch((error: unknown) => {
        stoppedBy = error instanceof Error ? error.message : String(error);
        return undefined;
      });
      if (!latest) break;
      transaction = latest;
      spinner.update(text());
      if (isFinal(transaction)) break;
      const pause = Math.min(minimumPollMs - (Date.now() - polled), deadline - Date.now());
      if (pause > 0) await Bun.sleep(pause);
    }
  } finally {
    clearInterval(ticker);
    spinner.stop();
  }
  if (stoppedBy) tell(`Stopped waiting for ${accepted.reference}: ${stoppedBy}`);
  return { transaction, waitedSeconds: Math.min(seconds, Math.round((Date.now() - started) / 1000)) };
}

/** What to do about an order a wait did not see final: where to follow it, and why it can take longer. */
export function stillOpenHint(transaction: Transaction, waitedSeconds: number, askedSeconds: number): string {
  const ref = transaction.reference;
  return [
    `${ref} is still ${transaction.status} after waiting ${waitedSeconds}s; it is not final yet.`,
    "A pending order is re-queried with its provider until it is final: the first re-query comes about 15s after the",
    "provider's first answer (the sandbox's numbers ending 5555 become successful then), later ones less often.",
    `Follow it: vendctl transactions watch ${ref}   (or: vendctl transactions get ${ref}; or a longer --wait, e.g. --wait ${Math.max(30, askedSeconds * 2)})`,
  ].join("\n");
}
