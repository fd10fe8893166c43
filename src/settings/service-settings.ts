import { api, databaseCommands, type SettingDoc, serviceProcesses, worker } from "./setting-doc.ts";

/** The database and the embedded database. */
export const databaseSettings: Record<string, SettingDoc> = {
  DATABASE_URL: {
    group: "Database",
    usedBy: [...databaseCommands, "vend partition"],
    does: "`postgres://…`: use that PostgreSQL server (production; it needs the contrib extension `pg_trgm`, which the migrations create). Several hosts (`postgres://u@db1:5432,db2:5432/vend`) for failover: a write goes to the primary. Unset: the embedded PGlite database in `VEND_DATA_DIR`.",
    example: "postgres://vend@db.example:5432/vend",
  },
  DATABASE_POOL_SIZE: {
    group: "Database",
    usedBy: serviceProcesses,
    does: "Connections per process to PostgreSQL (to the pooler, behind one); the read replica gets as many.",
  },
  DATABASE_POOLER: {
    group: "Database",
    usedBy: databaseCommands,
    does: "`transaction`: `DATABASE_URL` names PgBouncer in transaction mode (no named prepared statements; the role's timeouts are set by `vend migrate`); needs `DATABASE_DIRECT_URL`. `session` is the same as `none`.",
  },
  DATABASE_DIRECT_URL: {
    group: "Database",
    usedBy: databaseCommands,
    does: "A session of its own on the primary (or through a session-mode pooler) for LISTEN/NOTIFY and migrations; required with `DATABASE_POOLER=transaction`, and only with `DATABASE_URL`.",
    fallback: "`DATABASE_URL`",
  },
  DATABASE_MIGRATION_URL: {
    group: "Database",
    usedBy: ["vend migrate"],
    does: "The owner role's URL: `vend migrate` migrates as the owner, then grants the role of `DATABASE_URL` what the service uses (DML, no DDL, no ownership) and sets that role's pooler timeouts. Unset: the service's own role migrates (one role).",
  },
  DATABASE_READ_URL: {
    group: "Database",
    usedBy: api,
    does: "A read replica (one host or several) for operator reads and the catalogue, used while it trails the primary by less than `READ_REPLICA_MAX_LAG_MS`. Only API processes open it. Needs `DATABASE_URL` (the embedded database has no replicas). Unset: every read on the primary.",
    example: "postgres://vend@replica.example:5432/vend",
  },
  READ_REPLICA_MAX_LAG_MS: {
    group: "Database",
    usedBy: api,
    does: "Reads go to the replica only while its replay lag is under this; read only with `DATABASE_READ_URL`.",
  },
  DATABASE_CONNECT_TIMEOUT_SECONDS: {
    group: "Database",
    usedBy: serviceProcesses,
    does: "A PostgreSQL connection attempt gives up after this; requests then answer `503 SERVICE_UNAVAILABLE` with `Retry-After`.",
  },
  DATABASE_START_TIMEOUT_SECONDS: {
    group: "Database",
    usedBy: [...serviceProcesses, "vend migrate"],
    does: "How long a starting process waits for a database that does not answer (refused, too many clients, a name not resolving yet, starting up, a standby in recovery), retrying with backoff (0.5 s doubling to 10 s), one line on stderr per attempt; an API process listens meanwhile. Past it: one line naming the cause, exit 1. A database that refuses the process (a wrong password) stops it at once.",
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    group: "Database",
    usedBy: [...serviceProcesses, "vend migrate"],
    does: "PostgreSQL `statement_timeout` of the service's connections (behind a transaction pooler, set as the role's default by `vend migrate`).",
  },
  ALLOW_NEWER_SCHEMA: {
    group: "Database",
    usedBy: [...serviceProcesses, "vend migrate", "vend retention run"],
    does: "Start on a database a newer release migrated (rolling back to an expand-compatible release); otherwise such a start stops with one line.",
  },
  PGSSLMODE: {
    group: "Database",
    usedBy: serviceProcesses,
    does: "When the URL sets neither `sslmode` nor `ssl`: a value other than `disable` counts as TLS, so the connection watchdog leaves the pool's sockets to the driver (then only the connect and statement timeouts and TCP keepalive bound an outage). The driver takes TLS itself from the URL: write `?sslmode=require` there.",
    fallback: "unset (no TLS)",
    values: "`disable`, `require`, … (libpq's)",
  },
  PGSSL: {
    group: "Database",
    usedBy: serviceProcesses,
    does: "Read as `PGSSLMODE` is, when neither the URL nor `PGSSLMODE` says; `false` means no TLS.",
    fallback: "unset (no TLS)",
    values: "`true`, `false`",
  },
  VEND_DATA_DIR: {
    group: "Embedded database",
    usedBy: databaseCommands,
    does: "The PGlite data directory (only without `DATABASE_URL`), private to its user (`0700`, its files `0600`). One process at a time: a second start on it exits 1 naming the holder's pid; the lock of a process that died is taken over. A directory that cannot be created or written stops start-up with one line naming it.",
  },
  VEND_EMBEDDED_IMAGE: {
    group: "Embedded database",
    usedBy: databaseCommands,
    does: "A migrated embedded data directory (a tar) that a first start on a new `VEND_DATA_DIR` copies instead of running initdb and every migration. `npm install` makes it (`scripts/embedded-image.ts`); it belongs to the PGlite version and the committed migrations in its name, and is not used for others. One that cannot be read is cleared and initdb runs instead. `off`: never use one.",
    fallback: "`node_modules/.cache/vend/embedded-pglite-VERSION-migrations-DIGEST.tar`",
    values: "a file path, or `off`",
  },
};

/** The HTTP API, its limits and its keys. */
export const apiSettings: Record<string, SettingDoc> = {
  PORT: { group: "HTTP API", usedBy: api, does: "The HTTP port (`0` picks a free one)." },
  HOST: {
    group: "HTTP API",
    usedBy: [...api, "vend work"],
    does: "The interface to listen on (and a worker-only process's metrics): the embedded quick start is reachable from this machine only.",
  },
  PUBLIC_BASE_URL: {
    group: "HTTP API",
    usedBy: serviceProcesses,
    does: "Where the API is reachable: a `vend work` process posts the sandbox's callbacks there (unset: `http://127.0.0.1:$PORT`), and `/docs` shows it as the server (unset: the address the page was opened at).",
    fallback: "this server",
  },
  ADMIN_TOKEN: {
    group: "HTTP API",
    usedBy: api,
    does: "The bootstrap token of the admin API, the super-operator `ADMIN_TOKEN` with role `admin`. Unset: only operator tokens open the admin API; without any it answers `404`.",
  },
  CURSOR_SECRET: {
    group: "HTTP API",
    usedBy: api,
    does: "Signs list cursors. Unset: generated once and stored in the database, so every process on one database agrees.",
    fallback: "generated",
  },
  MAX_WAIT_SECONDS: { group: "HTTP API", usedBy: api, does: "The cap on the `wait` long-poll." },
  REQUEST_TIMEOUT_SECONDS: {
    group: "HTTP API",
    usedBy: api,
    does: "The request deadline; `wait` always answers at least one second before it.",
  },
  TRUST_PROXY: {
    group: "HTTP API",
    usedBy: api,
    does: "`true` takes the client address from the last `X-Forwarded-For` entry. Set only when a proxy you control always sets that header.",
  },
  SHUTDOWN_DELAY_SECONDS: {
    group: "HTTP API",
    usedBy: api,
    does: "On SIGTERM, how long to keep serving with `/readyz` at 503 before the drain, so a load balancer stops routing here first: above its detection time (`ops/haproxy.cfg`: 2 failed checks 500 ms apart, 1 s, doubled for margin).",
  },
  SHUTDOWN_GRACE_SECONDS: {
    group: "HTTP API",
    usedBy: serviceProcesses,
    does: "On SIGTERM, after `SHUTDOWN_DELAY_SECONDS`: new requests get `503` with `Retry-After`, and the listener closes once in-flight requests are answered, or after this many seconds; then the worker gives back its leases and the process exits 0.",
  },
  RATE_LIMIT_PER_MINUTE: {
    group: "Limits and keys",
    usedBy: api,
    does: "Requests per API key per minute, counted together by every API process on the database (`0`: no limit, no headers). Over it: `429 RATE_LIMITED` with `Retry-After`.",
  },
  RATE_LIMIT_MAX_BLOCK: {
    group: "Limits and keys",
    usedBy: api,
    does: "The most of a key's budget one process claims from the database at once (`0`: no bound). `1` claims for every request: `RateLimit-Remaining` exact across processes, one statement per request.",
  },
  AUTH_FAILURES_PER_MINUTE: {
    group: "Limits and keys",
    usedBy: api,
    does: "Failed authentications per client address (an IPv6 client's /64) per minute per process (`0`: no limit). Over it: `429 RATE_LIMITED` before any database work, for anything but working credentials, which are always served.",
  },
  KEY_PROPAGATION_MS: {
    group: "Limits and keys",
    usedBy: api,
    does: "The bound within which a key change (a revocation, a roll with grace 0) reaches every API process: the change answers once every process applied it, or after this, and takes effect from then. A process that has not heard its LISTEN heartbeat within three quarters of it authenticates from the database.",
  },
};

/** The worker and what it sends. */
export const workerSettings: Record<string, SettingDoc> = {
  WORKER_CONCURRENCY: {
    group: "Worker",
    usedBy: worker,
    does: "Transactions a worker process handles at once, at most (provider calls in flight). Completions are group-committed, so more in flight makes larger, cheaper batches.",
  },
  WORKER_CLAIM_MIN: {
    group: "Worker",
    usedBy: worker,
    does: "Rows a claim takes at least. The claim size starts here, doubles while claims come back full and halves when they come back less than half full.",
  },
  WORKER_CLAIM_MAX: {
    group: "Worker",
    usedBy: worker,
    does: "Rows a claim takes at most; at least `WORKER_CLAIM_MIN`. Unset: the smaller of 64 and `WORKER_CONCURRENCY` (the default shown).",
  },
  WORKER_POLL_MS: {
    group: "Worker",
    usedBy: worker,
    does: "The fallback poll: new work wakes workers by NOTIFY and an idle worker sleeps until its next order is due, so this only bounds how late a lost NOTIFY or a webhook retry is found.",
  },
  WORKER_LEASE_SECONDS: {
    group: "Worker",
    usedBy: worker,
    does: "How long a claimed transaction is leased before another worker may take it (and re-query first); extended every third of it while the job runs. With a live provider configured it must be at least twice that provider's timeout plus 5 s, or start-up is refused.",
  },
  WORKER_MAX_SENDS: {
    group: "Worker",
    usedBy: worker,
    does: 'Sends to the provider after which a re-query\'s "never received" fails the order instead of sending it again.',
  },
  WORKER_MAX_RESEND_AGE_SECONDS: {
    group: "Worker",
    usedBy: worker,
    does: 'Age (since acceptance) after which a re-query\'s "never received" fails the order instead of sending it again.',
  },
  REQUERY_SCHEDULE: {
    group: "Worker",
    usedBy: worker,
    does: "Seconds between re-queries of a `pending` transaction; the last value repeats.",
  },
  REQUERY_MAX_AGE_HOURS: {
    group: "Worker",
    usedBy: worker,
    does: "No re-query is scheduled later than this after acceptance: the order stays `pending` and is left for operators.",
  },
  STUCK_AFTER_MINUTES: {
    group: "Worker",
    usedBy: serviceProcesses,
    does: "A `pending` order older than this is stuck: raised to operators once and listed by `GET /admin/v1/transactions?stuck=true`.",
  },
  CATALOGUE_SYNC_INTERVAL: {
    group: "Worker",
    usedBy: worker,
    does: "How often the worker compares each live provider's plan list with the catalogue (a bare number is minutes). It only reports (a `catalogue_drift` anomaly, `vend_catalogue_drift`); applying is `vendctl catalogue sync`.",
  },
  WEBHOOK_RETRY_SCHEDULE: {
    group: "Webhooks",
    usedBy: worker,
    does: "Seconds before each delivery attempt (±10% jitter); after the last, the delivery is `failed`.",
  },
  WEBHOOK_TIMEOUT_MS: {
    group: "Webhooks",
    usedBy: serviceProcesses,
    does: "Per delivery attempt (and per operator webhook): DNS, connect and answer.",
  },
  WEBHOOK_CONCURRENCY: {
    group: "Webhooks",
    usedBy: worker,
    does: "Webhook deliveries one process keeps in flight.",
  },
  WEBHOOK_ENDPOINT_CONCURRENCY: {
    group: "Webhooks",
    usedBy: worker,
    does: "Of those, at most this many for one endpoint, so a slow receiver never delays another's deliveries; at most `WEBHOOK_CONCURRENCY`.",
  },
  WEBHOOK_DISABLE_AFTER_SECONDS: {
    group: "Webhooks",
    usedBy: worker,
    does: "An endpoint whose every attempt has failed for this long is disabled at its next failure (`disabled_reason: failing_deliveries`) and its pending deliveries stopped. `0`: never.",
  },
  WEBHOOK_ALLOW_PRIVATE_URLS: {
    group: "Webhooks",
    usedBy: serviceProcesses,
    does: "Which endpoints may target private, loopback or other non-public addresses: `false` none, `test` test-mode endpoints only, `true` both modes. Checked at creation, URL change, ping and every delivery.",
  },
  OPERATOR_WEBHOOK_URL: {
    group: "Webhooks",
    usedBy: worker,
    does: "Where stuck orders are also posted (`transaction.stuck`), signed with Standard Webhooks headers; needs `OPERATOR_WEBHOOK_SECRET`. Sent once; a failure is logged and not retried.",
    example: "https://ops.example/vend-hooks",
  },
  OPERATOR_WEBHOOK_SECRET: {
    group: "Webhooks",
    usedBy: worker,
    does: "The `whsec_…` secret operator webhooks are signed with; required with `OPERATOR_WEBHOOK_URL`.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  },
  CALLBACK_REPLAY_WINDOW_SECONDS: {
    group: "Provider callbacks",
    usedBy: api,
    does: "How far a provider callback signature's timestamp may be from the server's clock, either way (providers that sign one).",
  },
  CALLBACK_REJECTED_PER_MINUTE: {
    group: "Provider callbacks",
    usedBy: api,
    does: "Callbacks refused after a valid bearer token (bad or stale signature, bad body) stored per provider per minute per process; the rest are answered but not stored.",
  },
};

/** The request log (src/request-logs/, docs/operating.md "Request logs"); its retention is RETENTION_REQUEST_LOGS_DAYS. */
export const requestLogSettings: Record<string, SettingDoc> = {
  REQUEST_LOGS_ENABLED: {
    group: "Request logs",
    usedBy: api,
    does: "Record every request to the client API, the provider callbacks and the admin API (`GET /api/v1/request-logs`, `GET /admin/v1/request-logs`, `vendctl logs`) a moment after its answer, in batches, secrets replaced and destinations masked. `false`: nothing is recorded (the lists and tails show what was recorded before).",
  },
  REQUEST_LOGS_BUFFER_ROWS: {
    group: "Request logs",
    usedBy: api,
    does: "Records one API process holds waiting to be written, at most (and at most 64 MiB of their bodies). Past it (the database slower than the requests) a record is dropped, counted in `vend_request_logs_dropped_total` (`reason` `buffer_full`) and in a warning at most once a minute; the request itself is never slowed or failed.",
  },
  REQUEST_LOGS_FLUSH_MS: {
    group: "Request logs",
    usedBy: api,
    does: "How often the waiting records are written, one statement per batch of up to 500 (a full batch is written at once): about the most a record waits before a list or a tail shows it.",
  },
  REQUEST_LOGS_BODY_BYTES: {
    group: "Request logs",
    usedBy: api,
    does: "Each recorded body (the request's and the answer's) is cut to this many bytes of UTF-8, on a character boundary, and marked cut. `0`: no bodies are kept.",
  },
};

/** Logs, metrics, tracing, and what a build fixes. */
export const observabilitySettings: Record<string, SettingDoc> = {
  LOG_LEVEL: {
    group: "Logs, metrics and tracing",
    usedBy: [...serviceProcesses, "vend retention run"],
    does: "JSON log lines on stdout (`vend retention run`: stderr); they never contain API keys, bodies, query strings or destinations. At `info` every request gets one access line; at `info`, `debug` and `trace` a starting process also says on stderr what it is doing.",
  },
  METRICS_ENABLED: {
    group: "Logs, metrics and tracing",
    usedBy: serviceProcesses,
    does: "Serve Prometheus metrics at `GET /metrics` (a worker-only process on `METRICS_PORT`); off, it answers `404` and the process figures are not collected.",
  },
  METRICS_TOKEN: {
    group: "Logs, metrics and tracing",
    usedBy: serviceProcesses,
    does: "When set, a scrape must send `Authorization: Bearer <token>`, else `401`.",
  },
  METRICS_PORT: {
    group: "Logs, metrics and tracing",
    usedBy: ["vend work"],
    does: "A `vend work` process (no API) serves its own `/metrics` on this port: one fixed port per process, so two workers on one host need one each; a port taken stops the start in one line. `0`: a free port, printed at start (tests).",
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    group: "Logs, metrics and tracing",
    usedBy: serviceProcesses,
    does: "The OTLP/HTTP traces endpoint (e.g. `http://collector:4318/v1/traces`); unset: no tracing.",
  },
  OTEL_SERVICE_NAME: {
    group: "Logs, metrics and tracing",
    usedBy: serviceProcesses,
    does: "`service.name` on every span.",
  },
  VEND_BUILD_COMMIT: {
    group: "Build",
    usedBy: ["vend --version"],
    does: "The commit `vend --version` names, with `VEND_BUILD_DATE`. `npm run build` fixes both into the executables (`scripts/build.ts`); run from source without them, the version says `(from source)`.",
    fallback: "unset",
    values: "text",
  },
  VEND_BUILD_DATE: {
    group: "Build",
    usedBy: ["vend --version"],
    does: "The build date `vend --version` names, with `VEND_BUILD_COMMIT`.",
    fallback: "unset",
    values: "text",
  },
};
