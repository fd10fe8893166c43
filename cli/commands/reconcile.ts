import type { Command } from "commander";
import { reconcileCommandNamed } from "./wallet/reconcile.ts";

/** The top-level `reconcile`, kept so existing scripts work: the same command as `wallet reconcile`. */
export const reconcileCommand = (): Command =>
  reconcileCommandNamed(
    "reconcile",
    "Same as `wallet reconcile` (kept for existing scripts): every wallet against its ledger; exit 1 when the books do not balance",
  );
