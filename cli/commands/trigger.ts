import { Argument, Command } from "commander";
import { type SandboxScenario, sandboxDefaultScenario, sandboxScenarios } from "../../src/lib/shared/sandbox-outcomes.ts";
import { call } from "../client.ts";
import { actionCommand, integerOption, newIdempotencyKey, requireTestKey } from "../context.ts";
import { parseNgn } from "../money.ts";
import { tell } from "../prompt.ts";
import { onlyProduct, phoneNetworks } from "../vend/catalogue.ts";
import { isFinal, stillOpenHint, waitForFinal } from "../vend/wait.ts";
import { transactionDetailColumns } from "../views.ts";

/** Each outcome is a sandbox magic number: the destination's last four digits choose what the sandbox does. */
const outcomeEndings = {
  successful: "4567",
  failed: "1111",
  "pending-then-successful": "2222",
  "pending-then-failed": "3333",
  pending: "4444",
  "timeout-then-successful": "5555",
} as const;

type Outcome = keyof typeof outcomeEndings;
const outcomes = Object.keys(outcomeEndings) as Outcome[];

const scenarioOf = (outcome: Outcome): SandboxScenario => sandboxScenarios[outcomeEndings[outcome]] ?? sandboxDefaultScenario;

/** The webhook events the outcome produces, in order. */
function expectedEvents(outcome: Outcome): string[] {
  const scenario = scenarioOf(outcome);
  const final = scenario.eventualStatus ?? (scenario.status === "pending" ? undefined : scenario.status);
  return final ? [`transaction.${final}`] : [];
}

function expectation(outcome: Outcome): string {
  const events = expectedEvents(outcome);
  const scenario = scenarioOf(outcome);
  if (events.length === 0) return "no event: it stays pending (settle it with vendctl callbacks send)";
  const when = scenario.timeoutFirst
    ? "after the first re-query (about 15 s)"
    : scenario.eventualStatus
      ? "after the sandbox's callback (SANDBOX_CALLBACK_DELAY_MS, 2 s by default)"
      : "at once";
  return `${events.join(", ")} ${when}`;
}

const outcomesHelp = `
Outcomes: the phone number's last four digits choose what the sandbox does, and so the webhook events
${outcomes.map((o) => `  ${o.padEnd(24)} …${outcomeEndings[o]}  ${expectation(o)}`).join("\n")}`;

interface TriggerFlags {
  network: string;
  amount: string;
  wait?: number;
}

export const triggerCommand = (): Command =>
  actionCommand(
    new Command("trigger")
      .description(
        "Make a sandbox airtime vend that produces a chosen outcome and its webhook events, like `stripe trigger` " +
          "(test key only). Prints the transaction and the events to expect",
      )
      .addArgument(new Argument("<outcome>", "what the vend should do").choices(outcomes))
      .option("--network <code>", phoneNetworks, "mtn")
      .option("--amount <ngn>", "face value in NGN", "100")
      .option("--wait <seconds>", "follow the transaction up to this many seconds, until it is final", integerOption(0))
      .addHelpText("after", outcomesHelp),
    [
      "vendctl trigger pending-then-successful --wait 10",
      "vendctl webhooks listen --forward-to http://localhost:3000/hooks   # in another terminal, to receive the events",
    ],
    async (ctx, outcome: Outcome, flags: TriggerFlags) => {
      const client = requireTestKey(ctx, "trigger makes sandbox vends: use a test key (rg_test_…), not a live one");
      const amountKobo = parseNgn(flags.amount, "--amount");
      const product = await onlyProduct(client, flags.network, "airtime");
      const body = {
        product_code: product.code,
        network: flags.network,
        phone_number: `0803123${outcomeEndings[outcome]}`,
        amount_kobo: amountKobo,
        metadata: { vendctl_trigger: outcome },
      };
      const params = { header: { "Idempotency-Key": newIdempotencyKey() } };
      const { data } = await call(client.POST("/api/v1/vend", { params, body }));
      const seconds = flags.wait ?? 0;
      const { transaction, waitedSeconds } = await waitForFinal(client, data, seconds);
      await ctx.printer.record(transaction, transactionDetailColumns);
      await ctx.printer.note(`Triggered ${outcome}: ${transaction.reference}`);
      await ctx.printer.note(`Expect: ${expectation(outcome)}`);
      if (seconds > 0 && !isFinal(transaction) && outcome !== "pending") tell(stillOpenHint(transaction, waitedSeconds, seconds));
    },
  );
