import { Command, InvalidArgumentError } from "commander";
import type { components } from "../../../generated/openapi-types.ts";
import { unwrap } from "../../client.ts";
import { readConfigFile, writeProfile } from "../../config.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand, type Context } from "../../context.ts";
import type { Column } from "../../output.ts";
import { confirm, tell } from "../../prompt.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { cellValue } from "../../table.ts";
import { apiKeyCreatedColumns } from "../../views.ts";
import { keyHygieneColumns } from "./list.ts";

type Rolled = components["schemas"]["ApiKeyRolled"];

/** The new key's fields, then when the old one stops working; JSON is the API's answer unchanged. */
const rolledColumns: Column<Rolled>[] = [
  ...[...apiKeyCreatedColumns, ...keyHygieneColumns].map((column) => ({
    ...column,
    get: (rolled: Rolled) => cellValue(rolled.key, column),
  })),
  { key: "previous_expires_at", header: "OLD KEY EXPIRES AT", get: (rolled) => rolled.previous.expires_at },
];

const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600 };
const maxGraceSeconds = 86_400;

/** `90`, `90s`, `10m`, `1h`, `24h`: seconds, at most a day (the API's bound, checked before anything is sent). */
export function parseGrace(value: string): number {
  const match = /^(\d+)([smh]?)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError("expected a duration like 90s, 10m or 1h");
  const seconds = Number(match[1]) * (unitSeconds[match[2] || "s"] ?? 1);
  if (seconds > maxGraceSeconds) throw new InvalidArgumentError("at most 24h");
  return seconds;
}

/** --save writes it, --no-save does not; otherwise a terminal asks, and without one the profile stays as it was. */
async function shouldSave(ctx: Context, save: boolean | undefined): Promise<boolean> {
  if (save !== undefined) return save;
  if (!ctx.interactive) return false;
  return confirm(`Save the new key in profile "${ctx.config.profile}" (replacing the one in use)?`);
}

export const keysRollCommand = (): Command =>
  actionCommand(
    new Command("roll")
      .description(
        "Replace the API key in use with a new one (same account, mode and allowed IPs); the old key keeps working " +
          "for --grace, then is refused. The new key is shown only now; --save puts it in the profile. " +
          "--grace 0 asks to confirm on a terminal; --yes without one",
      )
      .option("--grace <duration>", "how long the old key keeps working: 0 to 24h (90s, 10m, 1h)", parseGrace, 3600)
      .option("--save", "save the new key in the active profile")
      .option("--no-save", "do not save it (and do not ask)")
      .addOption(yesOption("with --grace 0")),
    ["vendctl keys roll --grace 1h --save", "vendctl keys roll --grace 10m --no-save --json"],
    async (ctx, flags: { grace: number; save?: boolean; yes?: boolean }) => {
      if (flags.grace === 0) {
        await confirmDestructive(ctx, flags.yes, "Roll the API key in use with no grace", "The old key stops working at once");
      }
      const rolled = await unwrap(ctx.clients.api().POST("/api/v1/keys/roll", { body: { grace_seconds: flags.grace } }));
      await ctx.printer.record(rolled, rolledColumns);
      const oldUntil = rolled.previous.expires_at ?? "its expiry";
      await warnShownOnce(
        `Save this key now: it is shown only once. The old key (${rolled.previous.prefix}…) works until ${oldUntil}.`,
      );
      if (!(await shouldSave(ctx, flags.save))) {
        if (flags.save === undefined)
          tell(`Not saved: profile "${ctx.config.profile}" keeps the old key (vendctl config set api_key - saves one).`);
        return;
      }
      const name = ctx.config.profile;
      const path = writeProfile(name, { ...readConfigFile().profiles[name], apiKey: rolled.key.key });
      tell(`Saved the new key in profile "${name}" (${path}).`);
      if (ctx.config.sources.apiKey === "env" || ctx.config.sources.apiKey === "flag") {
        tell(
          `The key in use came from ${ctx.config.sources.apiKey === "env" ? "VENDCTL_API_KEY" : "--api-key"}: update it there too.`,
        );
      }
    },
  );
