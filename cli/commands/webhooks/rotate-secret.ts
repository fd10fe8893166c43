import { Command } from "commander";
import { endpointIdArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { endpointCreatedColumns } from "../../views.ts";
import { parseOverlap } from "./options.ts";

export const webhooksRotateSecretCommand = (): Command =>
  actionCommand(
    new Command("rotate-secret")
      .description(
        "Give an endpoint a new signing secret, shown only now. During the overlap deliveries are signed with both " +
          "the new and the old secret, so receivers can be switched over without missing an event. " +
          "--overlap 0 asks to confirm on a terminal; --yes without one",
      )
      .addArgument(endpointIdArgument())
      .option(
        "--overlap <duration>",
        "how long the old secret keeps signing: 0, 90s, 30m, 24h, up to 7d (default 24h)",
        parseOverlap,
      )
      .addOption(yesOption("with --overlap 0")),
    ["vendctl webhooks rotate-secret 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --overlap 1h --json"],
    async (ctx, id: string, flags: { overlap?: number; yes?: boolean }) => {
      if (flags.overlap === 0) {
        await confirmDestructive(
          ctx,
          flags.yes,
          `Rotate the signing secret of webhook endpoint ${id} with no overlap`,
          "The old secret stops signing at once: a receiver still checking it refuses every event",
        );
      }
      const body = flags.overlap === undefined ? undefined : { overlap_seconds: flags.overlap };
      const rotated = await unwrap(
        ctx.clients.api().POST("/api/v1/webhook-endpoints/{id}/rotate-secret", { params: { path: { id } }, body }),
      );
      await ctx.printer.record(rotated, endpointCreatedColumns);
      const until = rotated.previous_secret_expires_at;
      await warnShownOnce(
        `Save this signing secret now: it is shown only once. ${until ? `The old secret also signs until ${until}.` : "The old secret no longer signs."}`,
      );
    },
  );
