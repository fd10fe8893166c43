import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { keysCreateCommand } from "./keys/create.ts";
import { keysListCommand } from "./keys/list.ts";
import { keysRestrictCommand } from "./keys/restrict.ts";
import { keysRevokeCommand } from "./keys/revoke.ts";
import { keysRollCommand } from "./keys/roll.ts";

export const keysCommand = (): Command =>
  commandGroup(
    new Command("keys").description(
      "API keys: list, roll and restrict your own (API key); create, list and revoke any account's (admin token)",
    ),
    [keysCreateCommand(), keysListCommand(), keysRevokeCommand(), keysRollCommand(), keysRestrictCommand()],
    "vendctl keys create 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode test",
    "vendctl keys roll --grace 1h --save",
  );
