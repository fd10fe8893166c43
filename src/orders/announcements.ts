import type { Transaction } from "./view.ts";

/** Channel on which every final state change is announced (payload: the reference). */
export const finalChannel = "vend_txn_final";

/** NOTIFY payloads are limited to 8000 bytes; a larger transaction is announced by reference only. */
const maxAnnouncementBytes = 7900;

/**
 * What the final NOTIFY carries: the reference and, when it fits, the transaction as the API shows it,
 * so a woken long-poll answers without reading it again.
 */
export function finalAnnouncement(reference: string, transaction: Transaction): string {
  const full = JSON.stringify({ reference, transaction });
  return Buffer.byteLength(full) <= maxAnnouncementBytes ? full : JSON.stringify({ reference });
}

/** A final-state announcement (`vend_txn_final`): one transaction, or several of one completion. */
export interface FinalAnnouncement {
  reference: string;
  transaction?: Transaction;
}

/**
 * The transactions a final announcement names: a JSON array of announcements (a batch), one
 * announcement, or a bare reference.
 */
export function parseFinalAnnouncements(payload: string): FinalAnnouncement[] {
  const one = (value: unknown): FinalAnnouncement[] => {
    const parsed = value as { reference?: unknown; transaction?: Transaction } | null;
    return typeof parsed?.reference === "string" ? [{ reference: parsed.reference, transaction: parsed.transaction }] : [];
  };
  try {
    const parsed: unknown = JSON.parse(payload);
    if (Array.isArray(parsed)) return parsed.flatMap(one);
    const single = one(parsed);
    if (single.length > 0) return single;
  } catch {}
  return [{ reference: payload }];
}

/**
 * Groups announcements (in order) into NOTIFY payloads of JSON arrays, each within the size limit;
 * returns each announcement's group number.
 */
export function groupAnnouncements(announcements: readonly string[]): number[] {
  let group = 0;
  let bytes = 2;
  return announcements.map((announcement) => {
    const size = Buffer.byteLength(announcement) + 1;
    if (bytes > 2 && bytes + size > maxAnnouncementBytes) {
      group += 1;
      bytes = 2;
    }
    bytes += size;
    return group;
  });
}
