/**
 * The layers of src/ and the one direction imports may point (ARCHITECTURE.md):
 *
 *   composition (main, server, app) → feature routes → http
 *   feature routes → background work (src/jobs/queues, src/jobs/tasks) → feature services
 *     → domain (orders, ledger, idempotency, providers, the jobs runner, retention, webhooks but its routes)
 *     → base (db, lib, metrics, tracing, config, errors, logger)
 *
 * `src/deps.ts` is the type of the dependency bag the composition hands to routes and services: they may
 * import it; http, domain and base code may not (they take the few things they need as parameters).
 *
 * A module may import its own layer or any layer to its right, never one to its left. The CLI may use
 * only the pure shared helpers (src/lib) and the generated contract. Type-only imports count too.
 */
// Retention's settings are read with the rest of the configuration, so they sit in the bottom layer.
const base = "^src/(db|lib|metrics|tracing)/|^src/(config|errors|logger)\\.ts$|^src/retention/retention-settings\\.ts$";
// A webhook delivery's life (events, the outbox, deliveries, attempts, endpoints) is domain code: the order's
// completion and the batch completion write their events through it. Its routes.ts is a feature's route.
const domain =
  "^src/(orders|ledger|providers|idempotency)/|^src/jobs/(?!queues/|tasks/)|^src/retention/(?!retention-settings\\.ts$)|^src/webhooks/(?!routes\\.ts$)";
// The background work a process runs (its queues and periodic tasks): each names the feature or domain code it runs,
// and only the composition (src/background.ts) lists them.
const background = "^src/jobs/(queues|tasks)/";
const features =
  "^src/(admin|auth|callbacks|catalogue|provider-admin|system|transactions|vend|verification|wallet)/|^src/webhooks/routes\\.ts$";
const routes = "^src/[^/]+/routes\\.ts$";
const http = "^src/http/";
// src/roles/: what each of vend's commands runs (serve, work, migrate, config, operator create).
const composition = "^src/(main|server|app|background|load-config)\\.ts$|^src/roles/";
const deps = "^src/deps\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "base-imports-upward",
      comment: "db, lib, config, errors and logger are the bottom layer: they import nothing above them.",
      severity: "error",
      from: { path: base, pathNot: composition },
      to: { path: [domain, features, http, composition, deps, background] },
    },
    {
      name: "domain-imports-upward",
      comment: "Domain code (processing, ledger, providers, jobs, retention, webhooks) knows no feature, route, http or wiring.",
      severity: "error",
      from: { path: domain },
      to: { path: [features, http, composition, deps, background] },
    },
    {
      name: "background-imports-upward",
      comment: "Queues and tasks run feature and domain code; they know no route, http layer or wiring.",
      severity: "error",
      from: { path: background },
      to: { path: [routes, http, composition] },
    },
    {
      name: "service-imports-upward",
      comment: "Feature services know no routes, no http layer and no wiring.",
      severity: "error",
      from: { path: features, pathNot: [routes, composition] },
      to: { path: [routes, http, composition, background] },
    },
    {
      name: "routes-import-wiring",
      comment: "Routes are wired by src/app.ts; they never import it (or the server).",
      severity: "error",
      from: { path: routes },
      to: { path: composition },
    },
    {
      name: "http-imports-features",
      comment: "The http layer receives authentication and idempotency as functions; it imports no feature or domain code.",
      severity: "error",
      from: { path: http },
      to: { path: [features, domain, composition, deps] },
    },
    {
      name: "cli-imports-service",
      comment: "vendctl talks to the service over HTTP; from src it may use only the pure shared helpers.",
      severity: "error",
      from: { path: "^cli/" },
      to: { path: "^src/", pathNot: "^src/lib/shared/" },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|generated)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
