#!/usr/bin/env bun
import { Command, CommanderError, Option } from "commander";
import { versionLine } from "../src/lib/shared/version.ts";
import { type Colors, colorEnabled, colorsFor } from "./color.ts";
import { accountsCommand } from "./commands/accounts.ts";
import { adminCommand } from "./commands/admin.ts";
import { anomaliesCommand } from "./commands/anomalies.ts";
import { auditCommand } from "./commands/audit.ts";
import { authCommand } from "./commands/auth.ts";
import { batchesCommand } from "./commands/batches.ts";
import { callbacksCommand } from "./commands/callbacks.ts";
import { catalogueCommand } from "./commands/catalogue.ts";
import { completeCommand, completionCommand } from "./commands/completion.ts";
import { configCommand } from "./commands/config.ts";
import { eventsCommand } from "./commands/events.ts";
import { keysCommand } from "./commands/keys.ts";
import { loginCommand } from "./commands/login.ts";
import { logoutCommand } from "./commands/logout.ts";
import { logsCommand } from "./commands/logs.ts";
import { operatorsCommand } from "./commands/operators.ts";
import { plansCommand } from "./commands/plans.ts";
import { pricingCommand } from "./commands/pricing.ts";
import { productsCommand } from "./commands/products.ts";
import { providersCommand } from "./commands/providers.ts";
import { reconcileCommand } from "./commands/reconcile.ts";
import { reportCommand } from "./commands/report.ts";
import { topCommand } from "./commands/top.ts";
import { transactionsCommand } from "./commands/transactions.ts";
import { triggerCommand } from "./commands/trigger.ts";
import { vendCommand } from "./commands/vend.ts";
import { verifyCommand } from "./commands/verify.ts";
import { walletCommand } from "./commands/wallet.ts";
import { webhooksCommand } from "./commands/webhooks.ts";
import { ApiError, exitCodes, UnreachableError, UsageError } from "./errors.ts";
import { expandJsonFields } from "./fields.ts";
import { type CliIo, io, type OutputStream, processIo, withIo } from "./io.ts";
import { CancelledError } from "./prompt.ts";

/** Exit code for Ctrl-C or a declined confirmation, as shells report SIGINT. */
const cancelledExitCode = 130;

const exitCodeHelp = `
Configuration: flags, then VENDCTL_BASE_URL / VENDCTL_API_KEY / VENDCTL_ADMIN_TOKEN, then the profile
(--profile, VENDCTL_PROFILE, default "default") in $XDG_CONFIG_HOME/vendctl/config.json, written by \`vendctl login\`.
Amounts are given in NGN (500 or 500.50); tables show NGN, --json/--jsonl/--csv keep the API's kobo.
Tables show times in local time (TZ; --utc for UTC), are paged through $PAGER (default "less -FRX") when longer
than the terminal, and are coloured on a terminal unless NO_COLOR is set or --no-color is given.
--json FIELDS keeps only those fields (e.g. --json reference,status); --jq EXPR filters the JSON with jq.

Exit codes:
  0    ok
  1    API error (its code and message are printed, e.g. "TEST_MODE_ONLY: …", then its request id)
  2    usage: unknown command or flag, bad value, missing input without a terminal
  3    the server cannot be reached
  130  cancelled at a prompt

Example:
  $ vendctl vend airtime --network mtn --phone 08031234567 --amount 100 --wait 20 --yes --json
`;

function inheritSettings(command: Command, root: Command): void {
  for (const sub of command.commands) {
    sub.copyInheritedSettings(root);
    inheritSettings(sub, root);
  }
}

/** Help wraps at the terminal's width; at commander's default of 80 columns elsewhere. */
const helpWidth = (stream: OutputStream): number => (stream.isTTY && stream.columns ? stream.columns : 80);

/** A new program with new commands on every call: commander keeps parsed options on its Command objects. */
export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command("vendctl")
    .description("Operate the vending service: vend, inspect transactions, fund wallets, manage accounts, keys and webhooks")
    .version(versionLine("vendctl"), "-V, --version")
    .option("--base-url <url>", "API base URL (env VENDCTL_BASE_URL, default http://localhost:8080)")
    .option("--api-key <key>", "API key rg_test_…/rg_live_… (env VENDCTL_API_KEY)")
    .option("--admin-token <token>", "operator token for admin commands (env VENDCTL_ADMIN_TOKEN)")
    .option("-p, --profile <name>", 'saved profile to use (env VENDCTL_PROFILE, default "default")')
    .option("--json", "print the API's data as JSON (amounts in kobo); with FIELDS (a,b,c) only those fields")
    .addOption(new Option("--json-fields <fields>").hideHelp())
    .option("--jsonl", "print one JSON object per line")
    .option("--csv", "print CSV with a header row: every API field, amounts in kobo")
    .option("--table", "print a table (NGN, local times) even when stdout is not a terminal")
    .option("--jq <expr>", "filter the JSON output with a jq expression, strings printed raw (implies --json)")
    .option("--utc", "show times in UTC (default: local time)")
    .option("--no-color", "no colour (also NO_COLOR, and whenever the output is not a terminal)")
    .option("--no-pager", "do not page long output through $PAGER on a terminal")
    .option("--debug", "print each HTTP request and response on stderr, secrets redacted (env VENDCTL_DEBUG=1)")
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      // `--json` is a plain flag to commander; main() turns `--json a,b` into --json-fields.
      optionTerm: (option) => (option.long === "--json" ? "--json [fields]" : option.flags),
    })
    .exitOverride()
    .addHelpText("after", exitCodeHelp);
  for (const command of [
    loginCommand(),
    logoutCommand(),
    authCommand(),
    configCommand(),
    vendCommand(),
    transactionsCommand(),
    batchesCommand(),
    walletCommand(),
    catalogueCommand(),
    pricingCommand(),
    productsCommand(),
    plansCommand(),
    verifyCommand(),
    callbacksCommand(),
    webhooksCommand(),
    triggerCommand(),
    eventsCommand(),
    accountsCommand(),
    keysCommand(),
    reconcileCommand(),
    reportCommand(),
    providersCommand(),
    topCommand(),
    anomaliesCommand(),
    operatorsCommand(),
    auditCommand(),
    logsCommand(),
    adminCommand(),
    completionCommand(),
  ]) {
    program.addCommand(command);
  }
  program.addCommand(completeCommand(), { hidden: true });
  // commander's own usage errors ("error: unknown option …") start in red like ours.
  const colors = colorsFor(colorEnabled(io().stderr, !argv.includes("--no-color")));
  program.configureOutput({
    outputError: (text, write) => write(text.replace(/^error:/, colors.red(colors.bold("error:")))),
    // Help and usage errors go to the run's streams, like everything else (commander's default is the process's).
    writeOut: (text) => io().stdout.write(text),
    writeErr: (text) => io().stderr.write(text),
    getOutHelpWidth: () => helpWidth(io().stdout),
    getErrHelpWidth: () => helpWidth(io().stderr),
    getOutHasColors: () => colorEnabled(io().stdout),
    getErrHasColors: () => colorEnabled(io().stderr),
  });
  inheritSettings(program, program);
  return program;
}

/** The one place errors become messages and exit codes. */
export function reportError(
  error: unknown,
  write: (text: string) => void = (t) => io().stderr.write(t),
  colors: Colors = colorsFor(false),
): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  const label = colors.red(colors.bold("error:"));
  if (error instanceof ApiError) {
    const details = error.problems.map((p) => `\n  ${colors.bold(p.field)}: ${p.message}`).join("");
    write(`${colors.red(colors.bold(`${error.code}:`))} ${error.message}${details}\n`);
    // Its record in the request logs: what was sent and answered, for support or for the user.
    if (error.requestId) write(`${colors.dim(`Request id: ${error.requestId} (vendctl logs show ${error.requestId})`)}\n`);
    return exitCodes.api;
  }
  if (error instanceof UsageError) {
    write(`${label} ${error.message}\n`);
    return exitCodes.usage;
  }
  if (error instanceof UnreachableError) {
    write(`${label} ${error.message}\n`);
    return exitCodes.unreachable;
  }
  if (error instanceof CancelledError || (error instanceof Error && error.name === "ExitPromptError")) {
    write(`${error instanceof CancelledError ? error.message : "cancelled"}\n`);
    return cancelledExitCode;
  }
  write(`${label} ${error instanceof Error ? error.message : String(error)}\n`);
  return exitCodes.api;
}

/** Runs vendctl on `argv` (node-style: the first two are the runtime and the script) with `cliIo`; the exit code. */
export function main(argv: string[], cliIo: CliIo = processIo()): Promise<number> {
  return withIo(cliIo, () => run(argv));
}

async function run(argv: string[]): Promise<number> {
  try {
    const program = buildProgram(argv);
    await program.parseAsync(expandJsonFields(argv, program));
    return exitCodes.ok;
  } catch (error) {
    const colors = colorsFor(colorEnabled(io().stderr, !argv.includes("--no-color")));
    return reportError(error, undefined, colors);
  }
}

if (import.meta.main) {
  // A closed pipe (`vendctl … | head`) ends the output, not the user's shell session with a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(exitCodes.ok);
  });
  process.exitCode = await main(process.argv);
}
