import { Command } from "commander";
import { transactionReferenceArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { actionCommand, integerOption } from "../../context.ts";
import { isFinal } from "../../vend/wait.ts";
import type { Transaction } from "../../views.ts";

/** Poll no faster than this even when the server answers a long-poll at once. */
const minimumPollMs = 1000;

interface WatchFlags {
  wait: number;
}

function describe(t: Transaction): string {
  const extra = ["token", "units", "receipt_number"]
    .filter((key) => t.metadata[key])
    .map((key) => `${key}=${t.metadata[key]}`)
    .join(" ");
  return `${new Date().toISOString()}  ${t.reference}  ${t.status}${extra ? `  ${extra}` : ""}`;
}

export const transactionsWatchCommand = (): Command =>
  actionCommand(
    new Command("watch")
      .description("Long-poll a transaction and print each status change until it is final")
      .addArgument(transactionReferenceArgument())
      .option("--wait <seconds>", "long-poll length of each request", integerOption(0), 20),
    ["vendctl transactions watch txn_4kq9Zr2mXc81LwPb7sTfYhQe"],
    async (ctx, reference: string, flags: WatchFlags) => {
      const client = ctx.clients.api();
      let last: string | undefined;
      for (;;) {
        const started = Date.now();
        const wait = last === undefined ? 0 : flags.wait;
        const transaction = await unwrap(
          client.GET("/api/v1/transactions/{reference}", { params: { path: { reference }, query: { wait } } }),
        );
        if (transaction.status !== last) {
          last = transaction.status;
          if (ctx.printer.format === "table") await ctx.printer.write(`${describe(transaction)}\n`);
          else await ctx.printer.write(`${JSON.stringify(transaction)}\n`);
        }
        if (isFinal(transaction)) return;
        const elapsed = Date.now() - started;
        if (elapsed < minimumPollMs) await Bun.sleep(minimumPollMs - elapsed);
      }
    },
  );
