import { accessSync, constants, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { writeFileAtomically } from "../../atomic-file.ts";
import { fileDigest, maxBatchSize, type PlannedBatch, planBatches, type SentBatch, sendBatch } from "../../bulk/batches.ts";
import { checkAgainstCatalogue } from "../../bulk/catalogue-check.ts";
import { checkJournal, readJournal, removeJournal, writeJournal } from "../../bulk/journal.ts";
import { type BulkOrder, lineKey, type RowProblem, readOrders } from "../../bulk/orders.ts";
import { addCounts, followBatches, progressText } from "../../bulk/progress.ts";
import { collectResults, type ResultRow, resultsCsv } from "../../bulk/results.ts";
import { type BulkSummary, summaryColumns, summaryOf } from "../../bulk/summary.ts";
import type { VendClient } from "../../client.ts";
import { usesLiveKey } from "../../config.ts";
import { confirmDestructive, requireConsent, yesOption } from "../../confirm-destructive.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { CsvSyntaxError, parseCsv } from "../../csv.ts";
import { UsageError } from "../../errors.ts";
import { type Progress, progress } from "../../progress.ts";
import { tell } from "../../prompt.ts";
import { phoneNetworks } from "../../vend/catalogue.ts";

interface BulkFlags {
  out?: string;
  batchSize: number;
  /** Seconds to follow the orders until final; false with --no-wait. */
  wait: number | false;
  yes?: boolean;
}

const defaultWaitSeconds = 600;
const shownProblems = 50;

function batchSize(value: string): number {
  const size = integerOption(1)(value);
  if (size > maxBatchSize) throw new InvalidArgumentError(`at most ${maxBatchSize} (the API's limit per batch)`);
  return size;
}

function readFile(path: string): { bytes: Uint8Array; text: string } {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return { bytes, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    throw new UsageError(`${path} is not UTF-8 text; save it as CSV UTF-8`);
  }
}

/** The results must be writable before anything is sent, and must not replace the orders. */
function checkOut(file: string, out: string): void {
  if (resolve(out) === resolve(file)) throw new UsageError(`--out ${out} is the orders file itself; name another file`);
  try {
    accessSync(dirname(resolve(out)), constants.W_OK);
  } catch {
    throw new UsageError(`cannot write the results to ${out}: its directory does not exist or is not writable`);
  }
}

function refuse(path: string, problems: RowProblem[]): never {
  const sorted = [...problems].sort((a, b) => a.line - b.line);
  const lines = sorted.slice(0, shownProblems).map((p) => `  line ${p.line}: ${p.message}`);
  if (sorted.length > shownProblems) lines.push(`  … and ${sorted.length - shownProblems} more`);
  throw new UsageError(`${path}: nothing was sent; fix these rows and run the command again:\n${lines.join("\n")}`);
}

/**
 * The file's orders, checked on their own and then against the catalogue, with airtime products filled in; a
 * usage error (nothing sent) otherwise.
 */
async function ordersOf(path: string, text: string, client: VendClient): Promise<BulkOrder[]> {
  let records: ReturnType<typeof parseCsv>;
  try {
    records = parseCsv(text);
  } catch (error) {
    if (error instanceof CsvSyntaxError) refuse(path, [{ line: error.line, message: error.message.replace(/^line \d+: /, "") }]);
    throw error;
  }
  const { orders, problems } = readOrders(records);
  if (problems.length > 0) refuse(path, problems);
  const refused = await checkAgainstCatalogue(client, orders);
  if (refused.length > 0) refuse(path, refused);
  return orders;
}

/** Sends the batches in order; on an error, the results so far are written before it is reported. */
async function sendAll(
  client: VendClient,
  planned: PlannedBatch[],
  spinner: Progress,
  total: number,
  writeResults: (sent: SentBatch[], unsent: PlannedBatch[]) => Promise<unknown>,
  record: (sent: SentBatch[]) => void,
): Promise<SentBatch[]> {
  const sent: SentBatch[] = [];
  const show = () => {
    const orders = sent.reduce((n, s) => n + s.orders.length, 0);
    spinner.update(progressText(orders, total, sent.length, planned.length, addCounts(sent.map((s) => s.batch))));
  };
  show();
  record(sent);
  for (const batch of planned) {
    try {
      sent.push(await sendBatch(client, batch));
      record(sent);
    } catch (error) {
      const unsent = planned.slice(sent.length);
      spinner.stop();
      const wrote = await writeResults(sent, unsent).then(
        () => true,
        () => false,
      );
      const left = unsent.reduce((n, b) => n + b.orders.length, 0);
      tell(
        `Stopped before sending ${left} of ${total} orders${wrote ? " (not_sent in the results)" : ""}; ` +
          "run the same command again to send them: the batches already accepted are replayed, not vended again.",
      );
      throw error;
    }
    show();
  }
  return sent;
}

async function vendBulk(file: string, flags: BulkFlags, command: Command): Promise<void> {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  const { bytes, text } = readFile(file);
  const out = flags.out ?? `${file}.results.csv`;
  checkOut(file, out);
  const digest = fileDigest(bytes);
  const sizeGiven = command.getOptionValueSource("batchSize") !== "default";
  const journal = readJournal(file);
  const size = checkJournal(file, journal, digest, flags.batchSize, sizeGiven);
  if (journal && size !== flags.batchSize) tell(`Resuming with --batch-size ${size}, as the run that did not finish used`);
  const live = usesLiveKey(ctx.config);
  if (live) requireConsent(ctx, flags.yes, `Vending ${file} with a live key (real money)`);
  const orders = await ordersOf(file, text, client);
  const planned = planBatches(orders, size, digest);
  if (live) {
    await confirmDestructive(
      ctx,
      flags.yes,
      `Vend the ${orders.length} order${orders.length === 1 ? "" : "s"} of ${file} with a live key`,
      "They are real orders, paid from the live wallet with real money",
    );
  }
  let rows: ResultRow[] = [];
  const writeResults = async (sent: SentBatch[], unsent: PlannedBatch[]) => {
    const collected = await collectResults(client, sent, unsent);
    rows = collected.rows;
    writeFileAtomically(out, resultsCsv(rows));
    return collected.batches;
  };
  const spinner = progress(progressText(0, orders.length, 0, planned.length, addCounts([])));
  let summary: BulkSummary;
  try {
    const record = (sent: SentBatch[]) => writeJournal(file, digest, size, sent);
    const sent = await sendAll(client, planned, spinner, orders.length, writeResults, record);
    if (flags.wait !== false && flags.wait > 0) await followBatches(client, sent, flags.wait, spinner, orders.length);
    const batches = await writeResults(sent, []);
    removeJournal(file);
    summary = summaryOf({ file, out, digest, sent, batches, rows });
  } finally {
    spinner.stop();
  }
  await ctx.printer.record(summary, summaryColumns);
  const open = summary.counts.queued + summary.counts.processing + summary.counts.pending;
  if (open > 0) {
    tell(
      `${open} order${open === 1 ? " is" : "s are"} not final yet${flags.wait === false ? "" : ` after waiting up to ${flags.wait}s`}. ` +
        `Run the same command again later: it sends nothing new (every batch is replayed) and rewrites ${out} with their statuses.`,
    );
  }
}

const fileHelp = `
The file: CSV (RFC 4180, UTF-8, comma-separated, a header row; quoted fields may hold commas, quotes and line
breaks). Columns, in any order, names case-insensitive; an empty cell is left out:
  service           airtime, data, electricity or cable (required)
  destination       the phone number (airtime, data), meter number (electricity) or smartcard number (cable)
  amount            NGN, like --amount: 100 or 100.50; airtime and electricity; optional for data and cable
  product_code      data bundle or cable bouquet (required); airtime: default the network's airtime product
  network           ${phoneNetworks}; for electricity the disco, for cable the biller
  disco, biller     the same as network, for readability
  meter_type        electricity only: prepaid (default) or postpaid
  phone_number      electricity and cable: the customer's phone; airtime and data: the same as destination
  client_reference  your reference, echoed on the transaction and in the results
  metadata.<key>    metadata values (at most 19 such columns; vendctl adds ${lineKey}, the row's line)

Checks: every row is checked before anything is sent, against the live catalogue too, as a single vend checks
its flags: a network, disco or biller with nothing on sale for the service, and an amount the product would
refuse (outside its range, or not a fixed product's price), in NGN. A file with any bad row sends nothing and
lists each problem with its line (exit 2). What only the service can judge is in the results: an order it
rejects (a product code the catalogue lacks, a product taken off sale meanwhile) is "invalid", one the wallet
cannot cover when its turn comes is "refused"; the other orders still go through.

Live keys: orders sent with a live key (rg_live_…) are paid with real money. Once the file is checked, a
terminal asks to confirm (no: exit 130, nothing sent); without a terminal --yes is required (exit 2 without
it, before any request). A test key never asks.

Batches: --batch-size rows each, in file order; a batch is cut short where its request would pass 1 MB.
Resuming: each batch is sent with Idempotency-Key vendctl-bulk-<SHA-256 of the file's bytes, hex>-<first
line>-<last line>. Running the same command on the same file again (after Ctrl-C, a kill, a lost
connection, or only to refresh the results) replays the batches already accepted and sends only the rest:
nothing is vended twice. Until a run has sent everything, <file>.vendctl-bulk.json records what it sent; a
later run refuses a changed file or another --batch-size (exit 2), which would make new keys. Once a run
has finished, editing the file makes new keys: a changed file is a new order. The service keeps keys at
least 24 hours.

Results (--out, default <file>.results.csv, replaced atomically): one row per input row, in input order:
line, client_reference, batch_id, status (queued, processing, pending, successful, failed; or refused,
invalid, not_sent), reference, amount_kobo, price_kobo, error_code, error_message, token, units (electricity).
Progress (orders sent, final, failed) is shown on stderr when it is a terminal. The summary goes to stdout
(--json: files, each batch with its key, counts by status). Exit 0 once every order was sent, even if some
failed or were refused: read the results. A batch the API refuses whole is its error (exit 1, or 3 when the
server cannot be reached), after writing the results so far.`;

export const bulkCommand = (): Command =>
  withExample(
    new Command("bulk")
      .description(
        "Vend every row of a CSV file (POST /api/v1/vend/batches, up to 1,000 orders a batch), following them until " +
          "final, and write a results CSV. Safe to run again: what was sent is replayed, never vended twice.",
      )
      .argument("<file>", "the orders: CSV with a header row (see below)")
      .option("-o, --out <path>", "where to write the results CSV (default: <file>.results.csv)")
      .option("--batch-size <n>", `orders per batch, 1 to ${maxBatchSize}`, batchSize, maxBatchSize)
      .option(
        "--wait <seconds>",
        "follow the orders this long until every batch is final (progress on a terminal)",
        integerOption(0),
        defaultWaitSeconds,
      )
      .option("--no-wait", "stop once every batch is sent; the results show the orders as accepted")
      .addOption(yesOption("with a live key; a test key never asks"))
      .addHelpText("after", fileHelp)
      .action(vendBulk),
    "vendctl vend bulk orders.csv                       # writes orders.csv.results.csv",
    "vendctl vend bulk orders.csv --out results.csv --json",
    "printf 'service,network,destination,amount,client_reference\\nairtime,mtn,08031234567,100,inv-1\\n' > orders.csv",
  );
