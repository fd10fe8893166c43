import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { parseFrom, parseTo } from "../../dates.ts";
import { fields } from "../../views.ts";

interface ResendFlags {
  from: string;
  to: string;
  endpoint?: string;
}

export const webhooksResendFailedCommand = (): Command =>
  actionCommand(
    new Command("resend-failed")
      .description(
        "Send again the failed deliveries of events created in a time range (to enabled, subscribed endpoints). " +
          "Repeats the request while the server says there are more; what is already pending is never sent twice",
      )
      .requiredOption(
        "--from <date|time>",
        "events created at or after: 2026-11-22 (start of that day, local time) or RFC 3339",
        parseFrom,
      )
      .requiredOption(
        "--to <date|time>",
        "events created at or before: 2026-11-22 (end of that day, included) or RFC 3339",
        parseTo,
      )
      .option("--endpoint <id>", "only deliveries to this endpoint"),
    [
      "vendctl webhooks resend-failed --from 2026-11-20 --to 2026-11-22",
      "vendctl webhooks resend-failed --from 2026-11-20T08:00:00Z --to 2026-11-20T14:00:00Z --endpoint 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f",
    ],
    async (ctx, flags: ResendFlags) => {
      const api = ctx.clients.api();
      const body = { from: flags.from, to: flags.to, ...(flags.endpoint ? { endpoint_id: flags.endpoint } : {}) };
      let scheduled = 0;
      for (;;) {
        const answer = await unwrap(api.POST("/api/v1/events/resend-failed", { body }));
        scheduled += answer.scheduled;
        if (!answer.more || answer.scheduled === 0) break;
      }
      await ctx.printer.record({ scheduled, from: flags.from, to: flags.to }, fields("scheduled", "from", "to"));
    },
  );
