import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { Database } from "../../src/db/client.ts";
import { createMetrics } from "../../src/metrics/metrics.ts";
import { parsePrometheusText } from "../helpers/prometheus.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** A database that answers the queue query at once with an empty queue. */
const answering = {
  execute: async () => ({ rows: [{ due: 0, oldest_due_age_seconds: null, stuck: 0 }] }),
} as unknown as Database;

/** Every series name a scrape may carry, by family type (a histogram's `_bucket`, `_sum`, `_count`). */
async function exposedSeries(): Promise<Set<string>> {
  const metrics = createMetrics({
    database: { db: answering, connections: () => ({ inUse: 0, max: 1 }) },
    stuckAfterMinutes: 30,
  });
  const names = new Set<string>();
  for (const family of parsePrometheusText(await metrics.scrape()).values()) {
    const suffixes = family.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
    for (const suffix of suffixes) names.add(family.name + suffix);
  }
  return names;
}

const metricNames = (expr: string) => expr.match(/\bvend_[a-z0-9_]+/g) ?? [];

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels?: Record<string, string>;
  annotations: Record<string, string>;
}

describe("ops/", () => {
  test("prometheus-alerts.yml: rule groups with the four alerts, each with for: and annotations, on exposed metrics", async () => {
    const document = parse(read("ops/prometheus-alerts.yml")) as { groups: { name: string; rules: Rule[] }[] };
    expect(document.groups.length).toBeGreaterThan(0);
    const rules = document.groups.flatMap((group) => {
      expect(group.name).toBeString();
      return group.rules;
    });
    expect(rules.map((rule) => rule.alert).sort()).toEqual(
      ["ProviderErrorRate", "QueueAge", "StuckPendingOrders", "WebhookFailures"].sort(),
    );
    const exposed = await exposedSeries();
    for (const rule of rules) {
      expect({ alert: rule.alert, for: rule.for }).toEqual({ alert: rule.alert, for: expect.stringMatching(/^\d+[smh]$/) });
      expect(rule.annotations.summary).toBeString();
      expect(rule.annotations.description).toBeString();
      const used = metricNames(rule.expr);
      expect(used.length).toBeGreaterThan(0);
      for (const name of used) expect({ alert: rule.alert, name, exposed: exposed.has(name) }).toMatchObject({ exposed: true });
    }
  });

  test("grafana-dashboard.json: a dashboard whose every query uses exposed metrics, covering every family", async () => {
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
    const metrics = createMetrics({
      database: { db: answering, connections: () => ({ inUse: 0, max: 1 }) },
      stuckAfterMinutes: 30,
    });
    expect([...families].sort()).toEqual(metrics.familyNames().sort());
  });
});
