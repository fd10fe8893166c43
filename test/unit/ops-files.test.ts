import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { Database } from "../../src/db/client.ts";
import { loadSpec } from "../../src/http/spec.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createMetrics } from "../../src/metrics/metrics.ts";
import { parsePrometheusText } from "../helpers/prometheus.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** A database that answers the queue query at once with an empty queue. */
const answering = {
  execute: async () => ({ rows: [{ due: 0, oldest_due_age_seconds: null, stuck: 0 }] }),
} as unknown as Database;

/** A Metrics over that database; the caller closes it. */
const buildMetrics = () =>
  createMetrics({ database: { db: answering, connections: () => ({ inUse: 0, max: 1 }) }, stuckAfterMinutes: 30 });

/** Every series name a scrape may carry, by family type (a histogram's `_bucket`, `_sum`, `_count`). */
async function exposedSeries(): Promise<Set<string>> {
  const metrics = buildMetrics();
  try {
    const names = new Set<string>();
    for (const family of parsePrometheusText(await metrics.scrape()).values()) {
      const suffixes = family.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
      for (const suffix of suffixes) names.add(family.name + suffix);
    }
    return names;
  } finally {
    metrics.close();
  }
}

/** The service's and the process's metric names in an expression (not Prometheus's own `up`). */
const metricNames = (expr: string) => expr.match(/\b(?:vend|process|nodejs)_[a-z0-9_]+/g) ?? [];
const scrapedJobs = (expr: string) => [...expr.matchAll(/\bup\{job="([^"]+)"\}/g)].map((match) => match[1]);

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels?: Record<string, string>;
  annotations: Record<string, string>;
}

const scrapeConfig = parse(read("ops/prometheus.yml")) as { rule_files: string[]; scrape_configs: { job_name: string }[] };
const jobs = scrapeConfig.scrape_configs.map((config) => config.job_name);

describe("ops/", () => {
  test("prometheus.yml: the vend-api and vend-worker jobs, loading the alert rules", () => {
    expect(jobs.sort()).toEqual(["vend-api", "vend-worker"]);
    expect(scrapeConfig.rule_files).toEqual(["prometheus-alerts.yml"]);
  });

  test("prometheus-alerts.yml: each rule with for: and annotations, on exposed metrics or on the scraped jobs' up", async () => {
    const document = parse(read("ops/prometheus-alerts.yml")) as { groups: { name: string; rules: Rule[] }[] };
    expect(document.groups.length).toBeGreaterThan(0);
    const rules = document.groups.flatMap((group) => {
      expect(group.name).toBeString();
      return group.rules;
    });
    expect(rules.map((rule) => rule.alert).sort()).toEqual(
      [
        "ProviderErrorRate",
        "ProviderFloatMismatch",
        "QueueAge",
        "RequestLogsDropped",
        "StuckPendingOrders",
        "WebhookFailures",
        "VendApiDown",
        "VendApiMissing",
        "VendWorkerDown",
        "VendWorkerMissing",
        "VendQueueFiguresMissing",
      ].sort(),
    );
    const exposed = await exposedSeries();
    for (const rule of rules) {
      expect({ alert: rule.alert, for: rule.for }).toEqual({ alert: rule.alert, for: expect.stringMatching(/^\d+[smh]$/) });
      expect(rule.annotations.summary).toBeString();
      expect(rule.annotations.description).toBeString();
      const used = [...metricNames(rule.expr), ...scrapedJobs(rule.expr)];
      expect(used.length).toBeGreaterThan(0);
      for (const name of metricNames(rule.expr)) {
        expect({ alert: rule.alert, name, exposed: exposed.has(name) }).toMatchObject({ exposed: true });
      }
      for (const job of scrapedJobs(rule.expr))
        expect({ alert: rule.alert, job, scraped: jobs.includes(job ?? "") }).toMatchObject({ scraped: true });
    }
    // Every scraped job is watched both ways: its targets failing, and its targets gone.
    for (const job of jobs) {
      expect(rules.filter((rule) => rule.expr === `up{job="${job}"} == 0`)).toHaveLength(1);
      expect(rules.filter((rule) => rule.expr === `absent(up{job="${job}"})`)).toHaveLength(1);
    }
  });

  test("grafana-dashboard.json: every query on exposed metrics, every vend_ family and the process metrics shown", async () => {
    const dashboard = JSON.parse(read("ops/grafana-dashboard.json")) as {
      title: string;
      uid: string;
      schemaVersion: number;
      panels: { id: number; type: string; title: string; targets?: { refId: string; expr: string }[] }[];
    };
    expect(dashboard.title).toBeString();
    expect(dashboard.schemaVersion).toBeGreaterThan(30);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
    const exposed = await exposedSeries();
    const used = new Set(exprs.flatMap(metricNames));
    for (const name of used) expect({ name, exposed: exposed.has(name) }).toEqual({ name, exposed: true });
    const families = new Set([...used].map((name) => name.replace(/_(bucket|sum|count)$/, "")));
    const metrics = buildMetrics();
    const vendFamilies = metrics.familyNames().filter((name) => name.startsWith("vend_"));
    metrics.close();
    expect([...families].filter((name) => name.startsWith("vend_")).sort()).toEqual(vendFamilies.sort());
    expect([...families].filter((name) => !name.startsWith("vend_")).sort()).toEqual(
      [
        "nodejs_eventloop_lag_max_seconds",
        "nodejs_eventloop_lag_p99_seconds",
        "process_cpu_seconds_total",
        "process_max_fds",
        "process_open_fds",
        "process_resident_memory_bytes",
      ].sort(),
    );
    // Per process: each process panel keeps job and instance apart.
    for (const expr of exprs.filter((e) => /\b(process|nodejs)_/.test(e))) {
      expect({ expr, perProcess: /by \(job, instance\)|^\w+\{job=~"\$job"\}$/.test(expr) }).toMatchObject({ perProcess: true });
    }
    expect(exprs).toContain('up{job=~"$job"}');
  });
});

const promtool = Bun.which("promtool");
if (!promtool) {
  console.warn(
    "SKIPPED: promtool is not installed, so ops/prometheus-alerts.yml is not checked by Prometheus itself (apt-get install prometheus)",
  );
}

describe.skipIf(!promtool)("ops/ under promtool (Debian's prometheus package)", () => {
  const run = (...args: string[]) => {
    const result = Bun.spawnSync([promtool ?? "promtool", ...args], { cwd: new URL("../../ops/", import.meta.url).pathname });
    return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}` };
  };

  test("promtool check rules: the rules file is valid", () => {
    const result = run("check", "rules", "prometheus-alerts.yml");
    expect(result).toMatchObject({ code: 0, output: expect.stringContaining("SUCCESS: 11 rules found") });
  });

  test("promtool check config: the scrape configuration is valid", () => {
    expect(run("check", "config", "--syntax-only", "prometheus.yml")).toMatchObject({ code: 0 });
  });

  test("promtool test rules: up == 0 and absent() fire for a failing or missing target; the service's rules still fire", () => {
    const result = run("test", "rules", "prometheus-alerts.test.yml");
    expect(result).toMatchObject({ code: 0, output: expect.stringContaining("SUCCESS") });
  });
});

describe("ops/haproxy.cfg agrees with the service", () => {
  const cfg = read("ops/haproxy.cfg");
  const lines = cfg.split("\n").map((line) => line.replace(/#.*/, "").trim());
  const setting = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.slice(name.length + 1) ?? "";
  const seconds = (value: string) => Number.parseFloat(value) * (value.endsWith("ms") ? 0.001 : value.endsWith("m") ? 60 : 1);
  // Processes behind a balancer run on PostgreSQL (the embedded default has no delay: nothing stands in front of it).
  const defaults = loadConfig({ DATABASE_URL: "postgres://vend@127.0.0.1/vend" });

  test("the health check asks the readiness operation and finds a stopping process down before its SHUTDOWN_DELAY_SECONDS ends", () => {
    expect(lines).toContain("option httpchk");
    expect(lines).toContain("http-check expect status 200");
    const [, uri] = setting("http-check send").match(/\buri (\S+)/) ?? [];
    expect(uri).toBe(loadSpec().byId.get("getReadiness")?.path);
    const [, inter, fall] = setting("default-server").match(/\binter (\S+) fall (\d+)/) ?? [];
    const detection = seconds(inter ?? "") * Number(fall);
    expect(detection).toBe(1);
    // Twice the detection time, for margin.
    expect(defaults.shutdownDelaySeconds).toBeGreaterThanOrEqual(2 * detection);
  });

  test("no timeout cuts a long-poll or a request the service is still allowed to answer", () => {
    for (const timeout of ["timeout server", "timeout client"]) {
      expect({ timeout, above: seconds(setting(timeout)) > defaults.requestTimeoutSeconds }).toEqual({ timeout, above: true });
    }
    expect(defaults.maxWaitSeconds).toBeLessThan(defaults.requestTimeoutSeconds);
  });

  test("a stats socket, admin level for its own user only, where a rolling restart asks whether a new process is UP", () => {
    // Its path from VEND_LB_STATS_SOCKET, so the drill (and anyone without /run/haproxy) can put it elsewhere.
    expect(setting("stats socket")).toMatch(/^"\$\{VEND_LB_STATS_SOCKET-\/run\/haproxy\/vend\.sock\}" mode 600 level admin$/);
    expect(cfg).toContain('echo "show stat vend_api 4 -1" | socat stdio /run/haproxy/vend.sock');
  });

  test("only a request that cannot have reached a process, or a read, is sent again", () => {
    expect(setting("retry-on").split(/\s+/).sort()).toEqual(["conn-failure", "empty-response"]);
    expect(lines).toContain("http-request disable-l7-retry unless METH_GET || METH_HEAD");
  });
});

const haproxy = Bun.which("haproxy");
if (!haproxy)
  console.warn(
    "SKIPPED: haproxy is not installed, so ops/haproxy.cfg is not checked by HAProxy itself (apt-get install haproxy)",
  );

describe.skipIf(!haproxy)("ops/haproxy.cfg under haproxy -c", () => {
  const check = (env: Record<string, string>) => {
    const result = Bun.spawnSync([haproxy ?? "haproxy", "-c", "-f", "ops/haproxy.cfg"], {
      cwd: new URL("../../", import.meta.url).pathname,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}` };
  };

  test("valid with its defaults and with every variable set", () => {
    expect(check({})).toMatchObject({ code: 0, output: expect.stringContaining("Configuration file is valid") });
    const every = {
      VEND_LB_BIND: "127.0.0.1:18080",
      VEND_API_1: "10.0.0.1:8080",
      VEND_API_2: "10.0.0.2:8080",
      VEND_LB_STATS_SOCKET: "/tmp/vend-haproxy.sock",
    };
    expect(check(every)).toMatchObject({ code: 0 });
  });

  test("the variables are the ones it reads: a bad value in each fails the check", () => {
    for (const name of ["VEND_LB_BIND", "VEND_API_1", "VEND_API_2", "VEND_LB_STATS_SOCKET"]) {
      expect({ name, code: check({ [name]: "not-an-address:port" }).code }).toEqual({ name, code: 1 });
    }
  });
});
