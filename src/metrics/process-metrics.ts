import { createRequire } from "node:module";
import { createHistogram, type monitorEventLoopDelay, type PerformanceObserver } from "node:perf_hooks";
import { collectDefaultMetrics, type Registry } from "prom-client";

/**
 * prom-client's default families that Bun leaves constant: it has no libuv handles or requests to list
 * (always 0, even with a listening server) and emits no `gc` performance entries (never observed).
 */
const constantUnderBun = [
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_resources",
  "nodejs_active_resources_total",
  "nodejs_active_requests",
  "nodejs_active_requests_total",
  "nodejs_gc_duration_seconds",
];

interface PerfHooks {
  monitorEventLoopDelay: typeof monitorEventLoopDelay;
  PerformanceObserver: typeof PerformanceObserver;
}

type DelayMonitor = ReturnType<typeof monitorEventLoopDelay>;

// The CommonJS module object prom-client reads these two from when collection starts.
const perfHooks = createRequire(import.meta.url)("node:perf_hooks") as PerfHooks;

/**
 * An event-loop delay monitor of one registry's own: how late a timer of `resolutionMs` runs, in
 * nanoseconds. Bun's `monitorEventLoopDelay` shares one timer among all its monitors, and disabling
 * any of them stops them all, so two apps in one process could not each stop their own.
 */
function eventLoopDelayMonitor(resolutionMs: number): DelayMonitor {
  const histogram = createHistogram();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let due = 0;
  const schedule = () => {
    due = performance.now() + resolutionMs;
    timer = setTimeout(tick, resolutionMs);
    timer.unref();
  };
  const tick = () => {
    histogram.record(Math.max(1, Math.round((performance.now() - due) * 1e6)));
    schedule();
  };
  const disable = () => {
    if (!timer) return false;
    clearTimeout(timer);
    timer = undefined;
    return true;
  };
  const enable = () => {
    if (timer) return false;
    schedule();
    return true;
  };
  return Object.assign(histogram, { enable, disable, [Symbol.dispose]: disable });
}

/**
 * prom-client's default process metrics (CPU, resident memory, open file descriptors, event-loop delay,
 * heap) on `registry` alone, never the global one, so any number of apps can live in one process.
 * prom-client gives no handle on the event-loop monitor and GC observer it starts: its event-loop
 * monitor is ours (above), handed to it while it starts, and the returned function stops both.
 */
export function collectProcessMetrics(registry: Registry): () => void {
  const monitors: DelayMonitor[] = [];
  const observers: PerformanceObserver[] = [];
  const { monitorEventLoopDelay: nativeMonitor, PerformanceObserver: Observer } = perfHooks;
  perfHooks.monitorEventLoopDelay = (options) => {
    const monitor = eventLoopDelayMonitor(options?.resolution ?? 10);
    monitors.push(monitor);
    return monitor;
  };
  perfHooks.PerformanceObserver = class extends Observer {
    constructor(callback: ConstructorParameters<typeof PerformanceObserver>[0]) {
      super(callback);
      observers.push(this);
    }
  };
  try {
    // Its event-loop monitor is a timer of ours: prom-client's 10 ms would wake an idle process 100 times a
    // second (a few ms of CPU each second; each wake-up costs Bun 0.1-0.2 ms with its allocator's sweep); 200 ms
    // still catches any stall worth an alert (a stall shows as its length less up to one period).
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 200 });
  } finally {
    perfHooks.monitorEventLoopDelay = nativeMonitor;
    perfHooks.PerformanceObserver = Observer;
  }
  if (process.versions.bun) for (const name of constantUnderBun) registry.removeSingleMetric(name);
  return () => {
    for (const monitor of monitors) monitor.disable();
    for (const observer of observers) observer.disconnect();
  };
}
