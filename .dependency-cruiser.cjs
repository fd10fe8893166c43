/**
 * The layers of src/ and the one direction imports may point (ARCHITECTURE.md), top to bottom:
 *
 *   composition (main, roles, server, app, background, load-config)
 *   feature routes (src/<feature>/routes.ts), using the http library (src/http)
 *   deps.ts, the type of the dependency bag (routes pick from it)
 *   background work (src/jobs/queues, src/jobs/tasks)
 *   feature services (src/<feature>/*.ts)
 *   orders (an order's life: its verbs, its statements, its read side)
 *   the owners below orders (ledger, idempotency, providers, webhooks and request-logs but their routes), each on its own
 *   the retention pass and the jobs runner, on base alone (the composition hands them their work)
 *   base (db, lib, metrics, tracing, settings, config, errors, logger)
 *
 * A module may import its own layer or a lower one, never a higher one; within a layer, a route imports no
 * other feature's routes, and an owner below orders imports no other one. Only the background work and the
 * composition use the jobs runner. `src/http` is a library the routes use: it imports base code only.
 * `src/deps.ts` is imported by the composition and the routes only, and imports no feature code. The CLI may
 * use only the pure shared helpers (src/lib/shared) and the generated contract. Type-only imports count too.
 */
// Retention's settings are read with the rest of the configuration, so they sit in the bottom layer.
const base = "^src/(db|lib|metrics|tracing|settings)/|^src/(config|errors|logger)\\.ts$|^src/retention/retention-settings\\.ts$";
const orders = "^src/orders/";
// What orders stand on, each folder on base code alone. A webhook delivery's life (events, the outbox, deliveries,
// attempts, endpoints) is one of them: the order's completion and the batch completion write their events through
// it. Its routes.ts is a feature's route.
// The request log (src/request-logs/: the recorder, its secret rules, its statements and its live tails) is another:
// it alone writes request_logs, and its routes.ts is a feature's route.
const owners = "^src/(ledger|providers|idempotency)/|^src/(webhooks|request-logs)/(?!routes\\.ts$)";
const ownerFolders = "^src/(ledger|providers|idempotency|webhooks|request-logs)/";
// The retention pass (its owners' delete statements share its batch delete) and the jobs runner (without its queues
// and tasks): the composition hands them their statements, queues and tasks.
const retention = "^src/retention/(?!retention-settings\\.ts$)";
const jobsRunner = "^src/jobs/(?!queues/|tasks/)";
const domain = [orders, owners, retention, jobsRunner];
// The background work a process runs (its queues and periodic tasks): each names the feature or domain code it runs,
// and only the composition (src/background.ts) lists them.
const background = "^src/jobs/(queues|tasks)/";
const features =
  "^src/(admin|auth|callbacks|catalogue|provider-admin|system|transactions|vend|verification|wallet)/|^src/(webhooks|request-logs)/routes\\.ts$";
const routes = "^src/[^/]+/routes\\.ts$";
const http = "^src/http/";
// src/roles/: what each of vend's commands runs (serve, work, migrate, config, operator create).
const composition = "^src/(main|server|app|background|load-config)\\.ts$|^src/roles/";
const deps = "^src/deps\\.ts$";
// The process-wide credential state the bag holds. auth is a domain folder in waiting (its keys' home), classed with
// the features while its principal resolution reads admin's operators; the bag may name only these of its types.
const authState = "^src/auth/(credential-registry|guard|key-usage|registry-sync)\\.ts$";

/** Imports from `from` to `to` fail the rule `name`. */
const forbid = (name, comment, from, to) => ({ name, comment, severity: "error", from, to });

module.exports = {
  forbidden: [
    forbid(
      "base-imports-upward",
      "db, lib, settings, config, errors and logger are the bottom layer: they import nothing above them.",
      { path: base, pathNot: composition },
      { path: [...domain, features, http, composition, deps, background] },
    ),
    forbid(
      "domain-imports-upward",
      "Domain code (orders, ledger, providers, webhooks, jobs runner, retention) knows no feature, route, http or wiring.",
      { path: domain },
      { path: [features, http, composition, deps, background] },
    ),
    forbid(
      "domain-imports-orders",
      "Orders stand on the owners below them (providers, ledger, idempotency, webhooks), never the other way round.",
      { path: [owners, retention, jobsRunner] },
      { path: orders },
    ),
    forbid(
      "domain-imports-across",
      "Each owner below orders stands on its own: what two of them share (a type, a helper) lives in base.",
      { path: ownerFolders, pathNot: routes },
      { path: ownerFolders, pathNot: ["^src/$1/", routes] },
    ),
    forbid(
      "domain-imports-runner",
      "Only the background work and the composition use the jobs runner; the shapes of its work are in base.",
      { path: [orders, owners, retention] },
      { path: jobsRunner },
    ),
    forbid(
      "runner-imports-domain",
      "The retention pass and the jobs runner stand on base alone: the composition hands them their work.",
      { path: "^src/(retention|jobs)/", pathNot: [base, background] },
      { path: domain, pathNot: "^src/$1/" },
    ),
    forbid(
      "background-imports-upward",
      "Queues and tasks run feature and domain code; they know no route, http layer, dependency bag or wiring.",
      { path: background },
      { path: [routes, http, composition, deps] },
    ),
    forbid(
      "service-imports-upward",
      "Feature services know no routes, no http layer, no dependency bag and no wiring.",
      { path: features, pathNot: [routes, composition] },
      { path: [routes, http, composition, background, deps] },
    ),
    forbid(
      "routes-import-wiring",
      "Routes are wired by src/app.ts; they never import it (or the server).",
      { path: routes },
      { path: composition },
    ),
    forbid(
      "routes-import-routes",
      "A feature's routes call verbs and services, never another feature's handlers.",
      { path: "^src/([^/]+)/routes\\.ts$" },
      { path: routes, pathNot: "^src/$1/routes\\.ts$" },
    ),
    forbid(
      "deps-imports-features",
      "deps.ts is the type of the bag the composition hands to routes: it names http, domain and base types, no feature code.",
      { path: deps },
      { path: [features, background, composition], pathNot: authState },
    ),
    forbid(
      "http-imports-features",
      "The http layer receives authentication and idempotency as functions; it imports no feature or domain code.",
      { path: http },
      { path: [features, ...domain, composition, deps, background] },
    ),
    forbid(
      "cli-imports-service",
      "vendctl talks to the service over HTTP; from src it may use only the pure shared helpers.",
      { path: "^cli/" },
      { path: "^src/", pathNot: "^src/lib/shared/" },
    ),
    forbid("no-circular", "Modules that import each other, however indirectly, have no direction.", {}, { circular: true }),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|generated)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
