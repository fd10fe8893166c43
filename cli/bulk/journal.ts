import { readFileSync, rmSync } from "node:fs";
import { writeFileAtomically } from "../atomic-file.ts";
import { UsageError } from "../errors.ts";
import type { SentBatch } from "./batches.ts";

/**
 * What a run has sent so far, beside the input file (`<file>.vendctl-bulk.json`) until the run has sent
 * everything and written its results. A run that finds one checks that it sends the same file split the same
 * way, so every batch already accepted is replayed under its key, never vended again under a new one.
 */
export interface Journal {
  file_sha256: string;
  batch_size: number;
  batches: { first_line: number; last_line: number; id: string; idempotency_key: string }[];
}

export const journalPath = (file: string): string => `${file}.vendctl-bulk.json`;

export function readJournal(file: string): Journal | undefined {
  let text: string;
  try {
    text = readFileSync(journalPath(file), "utf8");
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as Journal;
  } catch {
    throw new UsageError(`${journalPath(file)} is not a vendctl journal; move it away and run the command again`);
  }
}

export function writeJournal(file: string, digest: string, batchSize: number, sent: SentBatch[]): void {
  const journal: Journal = {
    file_sha256: digest,
    batch_size: batchSize,
    batches: sent.map((s) => ({
      first_line: s.firstLine,
      last_line: s.lastLine,
      id: s.batch.id,
      idempotency_key: s.idempotencyKey,
    })),
  };
  writeFileAtomically(journalPath(file), `${JSON.stringify(journal, null, 2)}\n`);
}

export const removeJournal = (file: string): void => rmSync(journalPath(file), { force: true });

/**
 * The batch size to use: the journal's when the flag was not given. Refuses (nothing sent) a file that changed
 * since an unfinished run, or a different --batch-size: either would make new keys for orders already sent.
 */
export function checkJournal(
  file: string,
  journal: Journal | undefined,
  digest: string,
  batchSize: number,
  sizeGiven: boolean,
): number {
  if (!journal) return batchSize;
  const path = journalPath(file);
  const accepted = journal.batches.length;
  const sentOrders =
    accepted === 0
      ? "perhaps its first batch"
      : `${accepted} batch${accepted === 1 ? "" : "es"} (lines ${journal.batches[0]?.first_line}–${journal.batches[accepted - 1]?.last_line}) and perhaps the next`;
  if (journal.file_sha256 !== digest) {
    throw new UsageError(
      `${file} changed since a run that did not finish sent ${sentOrders} of it (${path}). Sending the changed file ` +
        "would vend those orders again under new keys. Put the file back as it was and run the same command to finish, " +
        `or remove the orders already sent from the file and delete ${path} to send the rest as a new file.`,
    );
  }
  if (sizeGiven && journal.batch_size !== batchSize) {
    throw new UsageError(
      `${file} was started with --batch-size ${journal.batch_size} and sent ${sentOrders} (${path}); ` +
        `run it again with --batch-size ${journal.batch_size} (or without --batch-size), so they are replayed and not vended again`,
    );
  }
  return journal.batch_size;
}
