import { Command } from "commander";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { call, unwrap, type VendClient } from "../client.ts";
import { confirmDestructive, yesOption } from "../confirm-destructive.ts";
import {
  actionCommand,
  type Context,
  commandGroup,
  contextOf,
  integerOption,
  newIdempotencyKey,
  withExample,
} from "../context.ts";
import { parseFrom, parseTo } from "../dates.ts";
import { io } from "../io.ts";
import { parseNgn } from "../money.ts";
import type { Column } from "../output.ts";
import { pause } from "../time.ts";

type Schemas = components["schemas"];
type ProviderStatus = Schemas["ProviderStatus"];
type ProviderStats = Schemas["ProviderStats"];
type ProviderBreaker = Schemas["ProviderBreaker"];

/** Operators read an open breaker's deadline against the wall clock, so a local time of day is enough. */
const clockTime = (iso: string): string => new Date(iso).toTimeString().slice(0, 8);

/** `closed`, `half_open`, or `open (data until 21:40:03)`: which service, and when a probe will be let through. */
function describeBreaker(breaker: ProviderBreaker): string {
  if (breaker.state !== "open") return breaker.state;
  const until = breaker.open_until ? `until ${clockTime(breaker.open_until)}` : "";
  const detail = [breaker.service ?? "", until].filter(Boolean).join(" ");
  return detail ? `open (${detail})` : "open";
}

/** The provider-wide breaker's state, then each service breaker that is open (closed ones are the normal case). */
function breakerParts(status: ProviderStatus): string[] {
  const wide = status.breakers.find((b) => b.service === null);
  const open = status.breakers.filter((b) => b.service !== null && b.state === "open");
  return [wide ? describeBreaker(wide) : "closed", ...open.map(describeBreaker)];
}

/** `enabled`, `disabled`, followed by whatever breaker is not closed. */
function stateOf(status: ProviderStatus): string {
  const breakers = breakerParts(status).filter((part) => part !== "closed");
  return [status.enabled ? "enabled" : "disabled", ...breakers].join(", ");
}

const providerColumns: Column<ProviderStatus>[] = [
  { key: "name" },
  { key: "mode" },
  { key: "enabled" },
  { key: "available" },
  { key: "breakers", header: "BREAKER", get: (p) => breakerParts(p).join(", ") },
  { key: "balance_kobo", money: true },
  { key: "low_balance", header: "LOW" },
];

const routeColumns: Column<Schemas["EffectiveRoute"]>[] = [
  { key: "service" },
  { key: "network", get: (r) => r.network ?? "*" },
  { key: "providers", get: (r) => r.providers.join(" → ") },
];

const percent = (rate: number | null | undefined): string | null =>
  rate === null || rate === undefined ? null : (rate * 100).toFixed(1);

function latency(window: Schemas["ProviderStatsWindow"] | undefined): string | null {
  if (!window || (window.p50_ms === null && window.p95_ms === null)) return null;
  return `${window.p50_ms ?? "-"}/${window.p95_ms ?? "-"}ms`;
}

/** Rates and answer times of one window; the API sends the 5-minute window, then the 60-minute one. */
function windowColumns(minutes: 5 | 60): Column<ProviderStats>[] {
  const windowOf = (s: ProviderStats) => s.windows.find((w) => w.minutes === minutes);
  return [
    { key: `success_rate_${minutes}m`, header: `${minutes}M OK%`, get: (s) => percent(windowOf(s)?.success_rate) },
    { key: `failure_rate_${minutes}m`, header: `${minutes}M FAIL%`, get: (s) => percent(windowOf(s)?.failure_rate) },
    { key: `p50_p95_${minutes}m`, header: `${minutes}M P50/P95`, get: (s) => latency(windowOf(s)) },
  ];
}

/** The stats carry no switch or breaker, so STATE comes from the provider list fetched with them. */
function statsColumns(states: Map<string, ProviderStatus>): Column<ProviderStats>[] {
  const state = (s: ProviderStats) => {
    const status = states.get(s.provider);
    return status ? stateOf(status) : null;
  };
  return [
    { key: "provider", header: "NAME" },
    { key: "state", get: state },
    { key: "pending" },
    ...windowColumns(5),
    ...windowColumns(60),
    { key: "balance_kobo", money: true },
    { key: "low_balance", header: "LOW" },
  ];
}

const listCommand = (): Command =>
  actionCommand(
    new Command("list").description("Providers with their switch, breakers and float, then the effective live routes"),
    ["vendctl providers list", "vendctl providers list --json | jq '.routes'"],
    async ({ clients, printer }) => {
      const overview = await unwrap(clients.admin().GET("/admin/v1/providers"));
      if (printer.format === "json") return printer.record(overview, []);
      await printer.listAll(providerColumns, overview.providers);
      if (printer.format !== "table") return;
      await printer.write("\n");
      if (overview.routes.length === 0) await printer.write("No live routes.\n");
      else await printer.listAll(routeColumns, overview.routes);
      if (overview.providers_file) await printer.write(`\nProviders file: ${overview.providers_file}\n`);
    },
  );

interface Snapshot {
  states: Map<string, ProviderStatus>;
  stats: ProviderStats[];
}

/** The named providers' figures (every provider's when none is named), with their states for the STATE column. */
async function fetchSnapshot(admin: VendClient, names: string[]): Promise<Snapshot> {
  const overview = await unwrap(admin.GET("/admin/v1/providers"));
  const chosen = names.length > 0 ? names : overview.providers.map((p) => p.name);
  const stats = await Promise.all(
    chosen.map((name) => unwrap(admin.GET("/admin/v1/providers/{name}/stats", { params: { path: { name } } }))),
  );
  return { states: new Map(overview.providers.map((p) => [p.name, p])), stats };
}

const printSnapshot = (ctx: Context, snapshot: Snapshot): Promise<void> =>
  ctx.printer.listAll(statsColumns(snapshot.states), snapshot.stats);

const clearScreen = "\x1b[2J\x1b[H";

/** Redraws until Ctrl-C, which is how the user ends a watch, so it returns normally (exit 0). */
async function watchSnapshots(ctx: Context, names: string[], intervalSeconds: number): Promise<void> {
  const admin = ctx.clients.admin();
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once("SIGINT", interrupt);
  try {
    for (let first = true; !stop.signal.aborted; first = false) {
      const snapshot = await fetchSnapshot(admin, names);
      if (stop.signal.aborted) break;
      // A terminal shows one table in place; a pipe or file keeps every refresh, a blank line between them.
      if (io().stdout.isTTY) await ctx.printer.write(clearScreen);
      else if (!first) await ctx.printer.write("\n");
      if (ctx.printer.format === "table") {
        await ctx.printer.write(`${new Date().toTimeString().slice(0, 8)}  every ${intervalSeconds}s, Ctrl-C to stop\n`);
      }
      await printSnapshot(ctx, snapshot);
      await pause(intervalSeconds * 1000, stop.signal);
    }
  } finally {
    process.off("SIGINT", interrupt);
  }
}

interface StatusFlags {
  watch?: boolean;
  interval: number;
}

const statusCommand = (): Command =>
  actionCommand(
    new Command("status")
      .description("Figures per provider over the last 5 and 60 minutes: pending orders, success and failure rates, answer times")
      .argument("[names...]", "providers to show (default: every provider)")
      .option("--watch", "redraw until Ctrl-C")
      .option("--interval <seconds>", "seconds between redraws with --watch", integerOption(1), 2),
    ["vendctl providers status", "vendctl providers status vtu clubkonnect --watch --interval 5"],
    async (ctx, names: string[], flags: StatusFlags) => {
      if (flags.watch) return watchSnapshots(ctx, names, flags.interval);
      await printSnapshot(ctx, await fetchSnapshot(ctx.clients.admin(), names));
    },
  );

/** One line for a person, or the API's data for a program. */
async function printSwitched(ctx: Context, status: ProviderStatus): Promise<void> {
  if (ctx.printer.format !== "table") return ctx.printer.record(status, providerColumns);
  const reason = status.disabled_reason ? ` (${status.disabled_reason})` : "";
  await ctx.printer.write(`Provider ${status.name}: ${stateOf(status)}${reason}\n`);
}

const disableCommand = (): Command =>
  withExample(
    new Command("disable")
      .description(
        "Take a provider out of every route; orders already with it stay with it. Asks to confirm on a terminal; --yes without one",
      )
      .argument("<name>", "provider name")
      .requiredOption("--reason <text>", "why; shown to other operators")
      .addOption(yesOption()),
    'vendctl providers disable vtu --reason "MTN data outage at VTpass, ticket 4411" --yes',
  ).action(async (name: string, flags: { reason: string; yes?: boolean }, command: Command) => {
    const ctx = contextOf(command);
    await confirmDestructive(
      ctx,
      flags.yes,
      `Disable provider ${name}`,
      "Its routes go to the next provider, or refuse orders where it is the only one, until it is enabled",
    );
    const request = { params: { path: { name } }, body: { reason: flags.reason } };
    await printSwitched(ctx, await unwrap(ctx.clients.admin().POST("/admin/v1/providers/{name}/disable", request)));
  });

const enableCommand = (): Command =>
  actionCommand(
    new Command("enable").description("Put a disabled provider back into its routes").argument("<name>", "provider name"),
    ["vendctl providers enable vtu"],
    async (ctx, name: string) => {
      const request = { params: { path: { name } } };
      await printSwitched(ctx, await unwrap(ctx.clients.admin().POST("/admin/v1/providers/{name}/enable", request)));
    },
  );

type FloatStep = Schemas["FloatReconciliationStep"];

const reconcileColumns: Column<FloatStep>[] = [
  { key: "from_sampled_at", header: "FROM" },
  { key: "to_sampled_at", header: "TO" },
  { key: "start_kobo", header: "START", money: true },
  { key: "topups_kobo", header: "TOP-UPS", money: true },
  { key: "costs_kobo", header: "COSTS", money: true },
  { key: "reversals_kobo", header: "REVERSALS", money: true },
  { key: "expected_change_kobo", header: "EXPECTED", money: true },
  { key: "actual_change_kobo", header: "ACTUAL", money: true },
  { key: "difference_kobo", header: "DIFFERENCE", money: true },
  { key: "within_tolerance", header: "OK" },
];

interface ReconcileFlags {
  from: string;
  to: string;
}

const reconcileCommand = (): Command =>
  actionCommand(
    new Command("reconcile")
      .description(
        "Walk a provider's float samples from --from to --to: for each pair, top-ups recorded, costs of the orders it " +
          "took, reversals of those it failed, the expected and the actual change, and the difference",
      )
      .argument("<name>", "provider name")
      .requiredOption(
        "--from <date|time>",
        "samples at or after: 2026-11-22 (start of that day, local time) or RFC 3339",
        parseFrom,
      )
      .requiredOption("--to <date|time>", "samples at or before: 2026-11-22 (end of that day, included) or RFC 3339", parseTo),
    [
      "vendctl providers reconcile vtu --from 2026-11-22 --to 2026-11-22",
      "vendctl providers reconcile vtu --from 2026-11-01 --to 2026-11-30 --csv",
    ],
    async ({ clients, printer }, name: string, flags: ReconcileFlags) => {
      const request = { params: { path: { name }, query: { from: flags.from, to: flags.to } } };
      const walk = await unwrap(clients.admin().GET("/admin/v1/providers/{name}/float-reconciliation", request));
      if (printer.format === "json") return printer.record(walk, []);
      await printer.listAll(reconcileColumns, walk.steps);
      if (printer.format !== "table") return;
      const off = walk.steps.filter((step) => !step.within_tolerance).length;
      const more = walk.truncated ? " (truncated: narrow the range to see the rest)" : "";
      await printer.write(
        `\n${walk.samples} samples, ${walk.steps.length} steps, ${off} beyond the tolerance of ${walk.tolerance_kobo} kobo${more}\n`,
      );
    },
  );

const topupColumns: Column<Schemas["FloatTopup"]>[] = [
  { key: "occurred_at" },
  { key: "amount_kobo", money: true },
  { key: "note" },
  { key: "created_at", header: "RECORDED" },
  { key: "id" },
];

interface TopupFlags {
  note: string;
  occurredAt?: string;
  idempotencyKey?: string;
}

const topupCommand = (): Command =>
  actionCommand(
    new Command("topup")
      .description(
        "Record money put on a provider's float (audited), for the float reconciliation; nothing is moved by it. " +
          "Prints the Idempotency-Key used, so a retry records it once",
      )
      .argument("<name>", "provider name")
      .argument("<amount>", "amount in NGN, e.g. 500000 or 500000.50")
      .requiredOption("--note <text>", "where it came from (the transfer's reference)")
      .option("--occurred-at <time>", "when it reached the provider, RFC 3339 (default: now)")
      .option("--idempotency-key <key>", "reuse the key of an earlier attempt; default: a new random key"),
    ['vendctl providers topup vtu 500000 --note "GTB transfer ref 55120"'],
    async (ctx, name: string, amount: string, flags: TopupFlags) => {
      const amountKobo = parseNgn(amount, "AMOUNT");
      const key = flags.idempotencyKey ?? newIdempotencyKey();
      await ctx.printer.note(`Idempotency-Key: ${key}`);
      const body = { amount_kobo: amountKobo, note: flags.note, ...(flags.occurredAt ? { occurred_at: flags.occurredAt } : {}) };
      const request = { params: { path: { name }, header: { "Idempotency-Key": key } }, body };
      const answer = await call(ctx.clients.admin().POST("/admin/v1/providers/{name}/float-topups", request));
      if (answer.response.headers.get("idempotent-replayed") === "true") {
        await ctx.printer.note("Replayed: the answer stored for this Idempotency-Key (nothing recorded twice)");
      }
      await ctx.printer.record(answer.data, topupColumns);
    },
  );

const topupsCommand = (): Command =>
  actionCommand(
    new Command("topups")
      .description("A provider's recorded float top-ups, the newest 100 first")
      .argument("<name>", "provider name"),
    ["vendctl providers topups vtu", "vendctl providers topups vtu --csv"],
    async ({ clients, printer }, name: string) => {
      const request = { params: { path: { name }, query: { limit: 100 } } };
      const page = await unwrap(clients.admin().GET("/admin/v1/providers/{name}/float-topups", request));
      await printer.listAll(topupColumns, page.items);
    },
  );

export const providersCommand = (): Command =>
  commandGroup(
    new Command("providers")
      .summary("Providers, routes and figures; switch a provider off or on (admin)")
      .description("Providers (admin token): their health and routes, figures over 5 and 60 minutes, operators' switches"),
    [listCommand(), statusCommand(), disableCommand(), enableCommand(), reconcileCommand(), topupCommand(), topupsCommand()],
    "vendctl providers status --watch",
  );
