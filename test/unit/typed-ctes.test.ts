import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { cte } from "../../src/db/cte.ts";
import { claimKeys } from "../../src/idempotency/claim-keys.ts";
import { holds, settleEach } from "../../src/ledger/movements.ts";
import { answerAttempts, attemptAnswerColumns } from "../../src/orders/statements/answer-attempt.ts";
import { emitEach } from "../../src/webhooks/statements/emit-each.ts";

const text = (fragment: ReturnType<typeof sql>) => new PgDialect().sqlToQuery(fragment).sql;

/**
 * The fragments of the ledger, the outbox, the attempt's answer and the key claim take the CTE they read as a
 * typed contract. The `@ts-expect-error` lines are checked by the type check (`tsc --noEmit`, a step of CI):
 * if a CTE lacking a column were accepted, the directive itself would fail it.
 */
describe("typed CTE contracts", () => {
  test("a CTE lacking a column the fragment reads is a type error", () => {
    const settledWithoutNote = cte("txn", ["id", "account_id", "mode", "price_kobo", "status", "ord"]);
    // @ts-expect-error the settlement reads `note` (the entry's note), which this CTE does not return
    const settled = settleEach(settledWithoutNote);
    const eventsWithoutPayload = cte("txn", ["event_id", "event_type", "account_id", "mode", "id"]);
    // @ts-expect-error the outbox reads each event's `payload`
    const emitted = emitEach(eventsWithoutPayload);
    const itemsWithoutRunning = cte("accepted", ["wallet_id", "transaction_id", "amount_kobo"]);
    // @ts-expect-error the holds read each wallet's running sum
    const held = holds(itemsWithoutRunning);
    const keysWithoutLock = cte("input", ["ord", "scope", "method", "path", "key"]);
    // @ts-expect-error the claim takes each key's advisory lock by name
    const claimed = claimKeys(keysWithoutLock);
    // What the types demand is what the SQL reads: the statement PostgreSQL would refuse at run time.
    expect(text(settled.wallet)).toContain("s.note");
    expect(text(emitted.parts)).toContain("payload");
    expect(text(held.entry)).toContain("i.running_kobo");
    // A column the CTE does not declare is no column at all: the SQL would be broken, as the type check says.
    expect(text(claimed)).toContain("hashtextextended(, 0)");
  });

  test("the fragment reads the columns of the CTE it is given, by that CTE's name", () => {
    const answers = cte("moved", [...attemptAnswerColumns, "extra"]);
    const written = text(answerAttempts(answers));
    expect(written).toContain("from moved");
    expect(written).toContain("join moved on moved.id = r.transaction_id");
    expect(written).toContain("coalesce(moved.answer_provider, moved.provider)");
    const settled = text(settleEach(cte("done", ["id", "account_id", "mode", "price_kobo", "status", "ord", "note"])).wallet);
    expect(settled).toContain("from done");
    expect(settled).not.toContain("txn");
  });
});
