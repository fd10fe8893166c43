import type { Metrics } from "./metrics.ts";

/**
 * `metrics` for work inside a transaction that may still roll back: a transition is counted only once
 * `afterCommit` runs it (the change committed). What really happened whatever the outcome (a provider's
 * answer time) is counted at once.
 */
export function transitionsAfterCommit(metrics: Metrics, afterCommit: (step: () => unknown) => void): Metrics {
  return new Proxy(metrics, {
    get(target, property, receiver) {
      if (property !== "vendTransitioned") return Reflect.get(target, property, receiver);
      return (...args: Parameters<Metrics["vendTransitioned"]>) => afterCommit(() => target.vendTransitioned(...args));
    },
  });
}
