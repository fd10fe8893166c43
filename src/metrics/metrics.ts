import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DbHandle } from "../db/client.ts";
import { collectProcessMetrics } from "./process-metrics.ts";
import { type QueueFigures, readQueueFigures } from "./queue-figures.ts";

/** What a vend's counters are labelled with; a transaction row has these fields. */
export interface VendLabels {
  service: string;
  network: string;
  provider: string;
}

/** A transaction as a transition left it: its status and, once final, when it was accepted and completed. */
export interface TransitionedVend extends VendLabels {
  status: string;
  createdAt: Date;
  completedAt: Date | null;
}

export type WebhookOutcome = "delivered" | "failed" | "retrying";
/**
 * Why a request's record was not written: the buffer was full, the database refused its batch (or did not
 * answer before shutdown), or it was one too many of a client address's requests without a recognised credential.
 */
export type RequestLogDropReason = "buffer_full" | "write_failed" | "unauthenticated";
const requestLogDropReasons: RequestLogDropReason[] = ["buffer_full", "write_failed", "unauthenticated"];
/** `unanswered`: a timeout or broken connection; `unreadable`: a 5xx or an answer that could not be read. */
export type ProviderErrorKind = "unanswered" | "unreadable";

export interface MetricsOptions {
  database: Pick<DbHandle, "db" | "connections">;
  /** A pending order older than this many minutes counts as stuck. */
  stuckAfterMinutes: number;
  /** How long the scrape waits for the queue query before leaving its gauges out. */
  queueQueryTimeoutMs?: number;
  /**
   * Collect the process's own figures (CPU, memory, event-loop delay: a timer waking the process five times a
   * second). Off where nothing can scrape them (METRICS_ENABLED unset), so an idle process is not woken for them.
   * Default: on.
   */
  processMetrics?: boolean;
}

const httpBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const finalBuckets = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 7200, 21_600];
const lagBuckets = [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 21_600];
const providerBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];
const finalStatuses = new Set(["successful", "failed"]);
/** The scrape is not traffic: counting it would add one request per scraper per interval to every rate. */
const scrapeOperation = "getMetrics";

/**
 * One process's metrics, on its own registry (built per process or per test, never shared). Counters
 * count what this process did; the queue gauges are read from the database at each scrape; the process
 * metrics (CPU, memory, event loop) run until `close()`.
 */
export class Metrics {
  readonly registry = new Registry();
  /** The scrape-time gauges live apart, so a scrape the database does not answer can leave them out. */
  private readonly queueRegistry = new Registry();
  private readonly httpRequests: Counter<"operation" | "status">;
  private readonly httpDuration: Histogram<"operation">;
  private readonly vends: Counter<"event" | "service" | "network" | "provider">;
  private readonly acceptToFinal: Histogram<"service" | "status">;
  private readonly webhookDeliveries: Counter<"outcome">;
  private readonly webhookLag: Histogram;
  private readonly providerDuration: Histogram<"provider" | "operation">;
  private readonly providerErrors: Counter<"provider" | "kind">;
  private readonly retentionDeletes: Counter<"table">;
  private readonly requestLogsWrittenRows: Counter;
  private readonly requestLogsDroppedRows: Counter<"reason">;
  private readonly catalogueDrift: Gauge<"provider" | "kind">;
  private readonly catalogueChecks: Counter<"provider" | "outcome">;
  private readonly floatMismatches: Counter<"provider">;
  private readonly replicaLag: Gauge;
  private readonly reads: Counter<"target">;
  private readonly queueDepth: Gauge;
  private readonly queueOldestAge: Gauge;
  private readonly stuck: Gauge;
  private readonly stopProcessMetrics: () => void;

  constructor(private readonly options: MetricsOptions) {
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers });
    this.stopProcessMetrics = options.processMetrics === false ? () => {} : collectProcessMetrics(this.registry);
    this.httpRequests = counter(
      "vend_http_requests_total",
      "HTTP requests answered, by operation (operationId, or (unmatched)) and status code",
      ["operation", "status"],
    );
    this.httpDuration = histogram(
      "vend_http_request_duration_seconds",
      "Time from a request's arrival to its answer, by operation",
      ["operation"],
      httpBuckets,
    );
    this.vends = counter(
      "vend_vends_total",
      "Vends accepted (202, not replays), and those that became successful, failed or pending",
      ["event", "service", "network", "provider"],
    );
    this.acceptToFinal = histogram(
      "vend_accept_to_final_seconds",
      "Time from a vend's acceptance to its final status",
      ["service", "status"],
      finalBuckets,
    );
    this.webhookDeliveries = counter(
      "vend_webhook_deliveries_total",
      "Webhook delivery attempts by outcome: delivered, retrying (will be tried again), failed (given up)",
      ["outcome"],
    );
    this.webhookLag = histogram(
      "vend_webhook_delivery_lag_seconds",
      "Time from an event's creation to its delivery",
      [],
      lagBuckets,
    );
    this.providerDuration = histogram(
      "vend_provider_request_duration_seconds",
      "Provider calls (vend, requery, verify) by provider, answered or not",
      ["provider", "operation"],
      providerBuckets,
    );
    this.providerErrors = counter(
      "vend_provider_errors_total",
      "Provider calls without a usable answer: unanswered (timeout, broken connection) or unreadable (5xx, garbage)",
      ["provider", "kind"],
    );
    this.retentionDeletes = counter(
      "vend_retention_deleted_rows_total",
      "Rows the retention passes of this process deleted, by table",
      ["table"],
    );
    this.requestLogsWrittenRows = counter("vend_request_logs_written_total", "Request log records this process wrote", []);
    this.requestLogsDroppedRows = counter(
      "vend_request_logs_dropped_total",
      "Request log records this process dropped: buffer_full, write_failed (the database refused the batch), unauthenticated (over 20 a minute from one address without a recognised credential)",
      ["reason"],
    );
    // Exposed at 0 from the start, so an alert's increase() sees the first drop.
    for (const reason of requestLogDropReasons) this.requestLogsDroppedRows.inc({ reason }, 0);
    this.catalogueDrift = new Gauge({
      name: "vend_catalogue_drift",
      help: "Differences the last scheduled catalogue sync found per provider: new_plan, price_change, dropped",
      labelNames: ["provider", "kind"],
      registers,
    });
    this.catalogueChecks = counter(
      "vend_catalogue_sync_checks_total",
      "Scheduled catalogue sync checks by outcome: in_sync, drift, failed (the provider did not answer readably)",
      ["provider", "outcome"],
    );
    this.floatMismatches = counter(
      "vend_provider_float_mismatch_total",
      "Pairs of a provider's float samples whose change differed from the expected (top-ups, costs, reversals) beyond the tolerance",
      ["provider"],
    );
    this.replicaLag = new Gauge({
      name: "vend_db_replica_lag_seconds",
      help: "The read replica's last sampled replay lag (+Inf when it cannot be sampled; 0 without DATABASE_READ_URL)",
      registers,
    });
    this.reads = new Counter({
      name: "vend_db_reads_total",
      help: "Operator and catalogue reads by the database that answered them: replica, or primary",
      labelNames: ["target"],
      registers,
    });
    const { database } = options;
    new Gauge({
      name: "vend_db_pool_connections",
      help: "Database connections of this process: in_use (a statement in flight) and max (the pool's size)",
      labelNames: ["state"],
      registers,
      collect() {
        const { inUse, max } = database.connections();
        if (inUse !== undefined) this.set({ state: "in_use" }, inUse);
        this.set({ state: "max" }, max);
      },
    });
    const queueRegisters = [this.queueRegistry];
    this.queueDepth = new Gauge({
      name: "vend_queue_depth",
      help: "Transactions due for work now (queued, processing or pending, next attempt due)",
      registers: queueRegisters,
    });
    this.queueOldestAge = new Gauge({
      name: "vend_queue_oldest_due_age_seconds",
      help: "How long the longest-waiting due transaction has been due",
      registers: queueRegisters,
    });
    this.stuck = new Gauge({
      name: "vend_stuck_transactions",
      help: "Pending transactions older than STUCK_AFTER_MINUTES",
      registers: queueRegisters,
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops the event-loop monitor and GC observer of the process metrics; counters still answer. */
  close(): void {
    this.stopProcessMetrics();
  }

  /** Every family this process exposes, the scrape-time ones included. */
  familyNames(): string[] {
    return [...this.registry.getMetricsAsArray(), ...this.queueRegistry.getMetricsAsArray()].map((metric) => metric.name);
  }

  /** The exposition text. The queue gauges are left out when the database does not answer in time. */
  async scrape(): Promise<string> {
    const figures = await this.readQueue();
    if (!figures) return this.registry.metrics();
    this.queueDepth.set(figures.due);
    this.queueOldestAge.set(figures.oldestDueAgeSeconds);
    this.stuck.set(figures.stuck);
    return (await this.registry.metrics()) + (await this.queueRegistry.metrics());
  }

  private async readQueue(): Promise<QueueFigures | undefined> {
    try {
      return await readQueueFigures(this.options.database.db, {
        stuckAfterMinutes: this.options.stuckAfterMinutes,
        timeoutMs: this.options.queueQueryTimeoutMs ?? 1000,
      });
    } catch {
      return undefined;
    }
  }

  httpAnswered(operation: string, status: number, seconds: number): void {
    if (operation === scrapeOperation) return;
    this.httpRequests.inc({ operation, status: String(status) });
    this.httpDuration.observe({ operation }, seconds);
  }

  vendAccepted(labels: VendLabels): void {
    this.vends.inc({ event: "accepted", ...vendLabels(labels) });
  }

  /** A transition that changed a transaction: final (with its accept-to-final time) or pending. */
  vendTransitioned(vend: TransitionedVend): void {
    const event = vend.status;
    if (event !== "pending" && !finalStatuses.has(event)) return;
    this.vends.inc({ event, ...vendLabels(vend) });
    if (!finalStatuses.has(event) || !vend.completedAt) return;
    // Rows read through raw SQL may carry timestamps as strings.
    const seconds = (new Date(vend.completedAt).getTime() - new Date(vend.createdAt).getTime()) / 1000;
    if (Number.isFinite(seconds)) this.acceptToFinal.observe({ service: vend.service, status: event }, Math.max(0, seconds));
  }

  /** The replica's lag in ms at a sample; undefined when it could not be sampled. */
  replicaLagSampled(lagMs: number | undefined): void {
    this.replicaLag.set(lagMs === undefined ? Number.POSITIVE_INFINITY : lagMs / 1000);
  }

  readServed(target: "primary" | "replica"): void {
    this.reads.inc({ target });
  }

  /** One webhook attempt recorded; a delivered one with the time since its event was created. */
  webhookAttempted(outcome: WebhookOutcome, eventCreatedAt?: Date): void {
    this.webhookDeliveries.inc({ outcome });
    if (outcome === "delivered" && eventCreatedAt && !Number.isNaN(eventCreatedAt.getTime())) {
      this.webhookLag.observe(Math.max(0, (Date.now() - eventCreatedAt.getTime()) / 1000));
    }
  }

  /** One provider call: its duration, and what went wrong when it had no usable answer. */
  providerCalled(provider: string, operation: string, seconds: number, error?: ProviderErrorKind): void {
    this.providerDuration.observe({ provider, operation }, seconds);
    if (error) this.providerErrors.inc({ provider, kind: error });
  }

  /** A scheduled catalogue sync's check of a provider: what it found, or that the provider could not be asked. */
  catalogueChecked(provider: string, found: { new_plan: number; price_change: number; dropped: number } | "failed"): void {
    if (found === "failed") {
      this.catalogueChecks.inc({ provider, outcome: "failed" });
      return;
    }
    for (const [kind, value] of Object.entries(found)) this.catalogueDrift.set({ provider, kind }, value);
    const drift = found.new_plan + found.price_change + found.dropped > 0;
    this.catalogueChecks.inc({ provider, outcome: drift ? "drift" : "in_sync" });
  }
  /** A float reconciliation that raised a `float_mismatch` anomaly. */
  floatMismatched(provider: string): void {
    this.floatMismatches.inc({ provider });
  }

  /** The provider's mismatch count exposed at 0 from the start, so an alert's increase() sees its first one. */
  watchFloat(provider: string): void {
    this.floatMismatches.inc({ provider }, 0);
  }

  /** Request log records written in one batch. */
  requestLogsWritten(rows: number): void {
    if (rows > 0) this.requestLogsWrittenRows.inc(rows);
  }

  /** Request log records dropped, and why. */
  requestLogsDropped(reason: RequestLogDropReason, rows: number): void {
    if (rows > 0) this.requestLogsDroppedRows.inc({ reason }, rows);
  }

  /** Rows a retention statement deleted from `table`. */
  retentionDeleted(table: string, rows: number): void {
    if (rows > 0) this.retentionDeletes.inc({ table }, rows);
  }
}

const vendLabels = ({ service, network, provider }: VendLabels): VendLabels => ({ service, network, provider });

export function createMetrics(options: MetricsOptions): Metrics {
  return new Metrics(options);
}
