import type { Metrics } from "../metrics/metrics.ts";
import type { Status, TransitionResult } from "./states.ts";

/**
 * Counts a committed transition in the process's metrics: a final status, or a move to pending (a
 * pending order re-checked and still pending, `previous` pending, is not counted again).
 */
export function counted(metrics: Metrics | undefined, result: TransitionResult, previous?: Status): TransitionResult {
  if (metrics && result.changed && result.row.status !== previous) metrics.vendTransitioned(result.row);
  return result;
}
