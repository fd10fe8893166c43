import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError } from "commander";
import { writeFileAtomically } from "../../atomic-file.ts";
import { resolveAirtimeProducts } from "../../bulk/airtime-products.ts";
import { fileDigest, maxBatchSize, type PlannedBatch, planBatches, type SentBatch, sendBatch } from "../../bulk/batches.ts";
import { type BulkOrder, type RowProblem, readOrders } from "../../bulk/orders.ts";
import { addCounts, followBatches, progressText } from "../../bulk/progress.ts";
import { collectResults, type ResultRow, resultsCsv } from "../../bulk/results.ts";
import { type BulkSummary, summaryColumns, summaryOf } from "../../bulk/summary.ts";
import type { VendClient } from "../../client.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { CsvSyntaxError, parseCsv } from "../../csv.ts";
import { UsageError } from "../../errors.ts";
import { type Progress, progress } from "../../progress.ts";
import { tell } from "../../prompt.ts";

interface BulkFlags {
  out?: string;
  batchSize: number;
  /** Seconds to follow the orders until final; false with --no-wait. */
  wait: number | false;
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

function refuse(path: string, problems: RowProblem[]): never {
  const sorted = [...problems].sort((a, b) => a.line - b.line);
  const lines = sorted.slice(0, shownProblems).map((p) => `  line ${p.line}: ${p.message}`);
  if (sorted.length > shownProblems) lines.push(`  … and ${sorted.length - shownProblems} more`);
  throw new UsageError(`${path}: nothing was sent; fix these rows and run the command again:\n${lines.join("\n")}`);
}

/** The file's orders, checked and with airtime products filled in; a usage error (nothing sent) otherwise. */
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
  const unresolved = await resolveAirtimeProducts(client, orders);
  if (unresolved.length > 0) refuse(path, unresolved);
  return orders;
}

/** Sends the batches in order; on an error, the results so far are written before it is reported. */
async function sendAll(
  client: VendClient,
  planned: PlannedBatch[],
  spinner: Progress,
  total: number,
  writeResults: (sent: SentBatch[], unsent: PlannedBatch[]) => Promise<unknown>,
): Promise<SentBatch[]> {
  const sent: SentBatch[] = [];
  const show = () => {
    const orders = sent.reduce((n, s) => n + s.orders.length, 0);
    spinner.update(progressText(orders, total, sent.length, planned.length, addCounts(sent.map((s) => s.batch))));
  };
  show();
  for (const batch of planned) {
    try {
      sent.push(await sendBatch(client, batch));
    } catch (error) {
      await writeResults(sent, planned.slice(sent.length)).catch(() => undefined);
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
  const orders = await ordersOf(file, text, client);
  const digest = fileDigest(bytes);
  const planned = planBatches(orders, flags.batchSize, digest);
  const out = flags.out ?? `${file}.results.csv`;
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
    const sent = await sendAll(client, planned, spinner, orders.length, writeResults);
    if (flags.wait !== false && flags.wait > 0) await followBatches(client, sent, flags.wait, spinner, orders.length);
    const batches = await writeResults(sent, []);
    summary = summaryOf({ file, out, digest, sent, batches, rows });
  } finally {
    spinner.stop();
  }
  await ctx.printer.record(summary, summaryColumns);
  const open = summary.counts.queued + summary.counts.processing + summary.counts.pending;
  if (open > 0) {
    tell(
      `${open} orders are not final yet${flags.wait === false ? "" : ` after waiting up to ${flags.wait}s`}. ` +
        `Run the same command again later: it sends nothing new (every batch is replayed) and rewrites ${out} with their statuses.`,
    );
  }
}

export const bulkCommand = withExample(
  new Command("bulk")
    .description(
      "Vend every row of a CSV file (POST /api/v1/vend/batches, up to 1,000 orders a batch) and write a results CSV. " +
        "The file's header row names its columns: service (airtime, data, electricity, cable), destination (phone, " +
        "meter or smartcard number), amount (NGN, e.g. 100 or 100.50; airtime and electricity), product_code " +
        "(data and cable; airtime: default the network's product), network / disco / biller, meter_type " +
        "(electricity: prepaid or postpaid), phone_number (electricity and cable: the customer's), client_reference, " +
        "and metadata.<key> columns. Every row is checked first: a file with a bad row sends nothing (exit 2, each " +
        "problem with its line). What only the service can judge (an unknown product, an amount out of range, a " +
        "wallet that cannot cover an order) is in the results as invalid or refused. Each batch's Idempotency-Key is " +
        "vendctl-bulk-<SHA-256 of the file's bytes>-<first line>-<last line>: running the same command on the same " +
        "file again (after a kill, a lost connection, or to refresh the results) replays the batches already sent " +
        "and vends nothing twice; a changed file or a different --batch-size makes new keys and would vend again. " +
        "Keys are kept at least 24 hours. Exit 0 once every order was sent, even if some failed or were refused: " +
        "read the results.",
    )
    .argument("<file>", "the orders, CSV with a header row (UTF-8)")
    .option("-o, --out <path>", "where to write the results CSV (default: <file>.results.csv); replaced atomically")
    .option("--batch-size <n>", `orders per batch, 1 to ${maxBatchSize}`, batchSize, maxBatchSize)
    .option(
      "--wait <seconds>",
      "follow the orders this long until every batch is final (progress on a terminal)",
      integerOption(0),
      defaultWaitSeconds,
    )
    .option("--no-wait", "stop once every batch is sent; the results show the orders as accepted")
    .action(vendBulk),
  "vendctl vend bulk orders.csv                       # writes orders.csv.results.csv",
  "vendctl vend bulk orders.csv --out results.csv --json",
  "printf 'service,network,destination,amount,client_reference\\nairtime,mtn,08031234567,100,inv-1\\n' > orders.csv",
);
