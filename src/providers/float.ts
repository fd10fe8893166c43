import { type SQL, sql } from "drizzle-orm";
import { defaultFloatToleranceKobo, type RoutingConfig } from "../config.ts";
import { queryRows } from "../db/rows.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { formatNgn } from "../lib/shared/money.ts";
import type { Logger } from "../logger.ts";
import { raiseAnomaly } from "./anomalies.ts";

/** One pair of consecutive float samples, and what happened to the float between them by our records. */
export interface FloatStep {
  fromSampledAt: Date;
  toSampledAt: Date;
  startKobo: number;
  endKobo: number;
  topupsKobo: number;
  costsKobo: number;
  reversalsKobo: number;
  expectedChangeKobo: number;
  actualChangeKobo: number;
  differenceKobo: number;
  /** Costs of attempts sent by the first sample and not answered by then: the float may or may not show them yet. */
  inFlightStartKobo: number;
  /** The same at the second sample. */
  inFlightEndKobo: number;
  withinTolerance: boolean;
}

/** A failure recorded longer than this after its send is not counted as a reversal (it bounds the scan by `sent_at`). */
const reversalWindow = "30 days";

/** At most this many samples in one walk. */
export const walkLimit = 1000;

export const floatToleranceOf = (routing: Pick<RoutingConfig, "floatToleranceKobo">, provider: string): number =>
  routing.floatToleranceKobo[provider] ?? defaultFloatToleranceKobo;

type StepRow = {
  t0: Date | string;
  t1: Date | string;
  b0: number | string;
  b1: number | string;
  topups: number | string;
  costs: number | string;
  reversals: number | string;
  flight0: number | string;
  flight1: number | string;
};

/**
 * The steps between the provider's samples taken in [from, to], oldest first (at most `walkLimit` samples).
 * Between samples at t0 and t1 (t0 exclusive, t1 inclusive): top-ups by `occurred_at`; costs of the attempts
 * sent (`sent_at`) that the provider took (any status but `not_received`): it debits its float when it takes
 * an order; reversals: costs of the attempts it failed, by when the failure was recorded (`answered_at`):
 * it credits back what it did not deliver. An attempt without a cost counts 0.
 *
 * An attempt in flight at a sample (sent by then, its answer later) may have reached the provider before its
 * float was read, or after: counted by its send, it makes the difference of that pair up to its cost higher,
 * and of the next as much lower. So a step is within tolerance when
 * `-(tolerance + in flight at the start) <= difference <= tolerance + in flight at the end`.
 */
export async function floatSteps(
  db: Executor,
  provider: string,
  from: Date,
  to: Date,
  toleranceKobo: number,
): Promise<{ samples: number; truncated: boolean; steps: FloatStep[] }> {
  const rows = await queryRows<StepRow & { samples: number | string }>(
    db,
    sql`with s as (
          select id, balance_kobo, sampled_at from provider_float_samples
          where provider = ${provider} and sampled_at >= ${from.toISOString()}::timestamptz
            and sampled_at <= ${to.toISOString()}::timestamptz
          order by sampled_at, id limit ${walkLimit + 1}
        ), pairs as (
          select lag(sampled_at) over w as t0, lag(balance_kobo) over w as b0, sampled_at as t1, balance_kobo as b1
          from (select * from s order by sampled_at, id limit ${walkLimit}) walked window w as (order by sampled_at, id)
        )
        select p.t0, p.t1, p.b0, p.b1, (select count(*) from s) as samples,
          (select coalesce(sum(amount_kobo), 0) from provider_float_topups
           where provider = ${provider} and occurred_at > p.t0 and occurred_at <= p.t1) as topups,
          (select coalesce(sum(cost_kobo), 0) from provider_attempts
           where provider = ${provider} and sent_at > p.t0 and sent_at <= p.t1 and status <> 'not_received') as costs,
          (select coalesce(sum(cost_kobo), 0) from provider_attempts
           where provider = ${provider} and sent_at > p.t0 - interval '${sql.raw(reversalWindow)}' and sent_at <= p.t1
             and status = 'failed' and answered_at > p.t0 and answered_at <= p.t1) as reversals,
          (${inFlight(provider, sql`p.t0`)}) as flight0,
          (${inFlight(provider, sql`p.t1`)}) as flight1
        from pairs p where p.t0 is not null order by p.t1`,
  );
  const samples = Number(rows[0]?.samples ?? 0);
  return {
    samples: Math.min(samples, walkLimit),
    truncated: samples > walkLimit,
    steps: rows.map((row) => toStep(row, toleranceKobo)),
  };
}

/** Costs of the provider's attempts sent by `at` whose (last) answer came after it, or has not come. */
const inFlight = (provider: string, at: SQL) =>
  sql`select coalesce(sum(cost_kobo), 0) from provider_attempts
      where provider = ${provider} and sent_at > ${at} - interval '${sql.raw(reversalWindow)}' and sent_at <= ${at}
        and status <> 'not_received' and (answered_at is null or answered_at > ${at})`;

function toStep(row: StepRow, toleranceKobo: number): FloatStep {
  const figures = [row.b0, row.b1, row.topups, row.costs, row.reversals, row.flight0, row.flight1].map(Number);
  const [startKobo, endKobo, topupsKobo, costsKobo, reversalsKobo, inFlightStartKobo, inFlightEndKobo] = figures as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const expectedChangeKobo = topupsKobo - costsKobo + reversalsKobo;
  const actualChangeKobo = endKobo - startKobo;
  const differenceKobo = actualChangeKobo - expectedChangeKobo;
  return {
    fromSampledAt: new Date(row.t0),
    toSampledAt: new Date(row.t1),
    startKobo,
    endKobo,
    topupsKobo,
    costsKobo,
    reversalsKobo,
    expectedChangeKobo,
    actualChangeKobo,
    differenceKobo,
    inFlightStartKobo,
    inFlightEndKobo,
    withinTolerance: differenceKobo >= -(toleranceKobo + inFlightStartKobo) && differenceKobo <= toleranceKobo + inFlightEndKobo,
  };
}

/**
 * Keeps a float the provider reported (`provider_float_samples`) and reconciles it with the sample before
 * it, in one transaction that holds the provider's float lock, so concurrent samplers form a chain and each
 * pair is reconciled once, by the sample that closes it. A step beyond the tolerance raises a
 * `float_mismatch` anomaly. Returns the step (null for a provider's first sample).
 */
export async function recordFloatSample(
  db: Executor,
  logger: Logger,
  provider: string,
  balanceKobo: number,
  toleranceKobo: number,
): Promise<FloatStep | null> {
  return withTransaction(db, async (tx) => {
    await queryRows(tx, sql`select pg_advisory_xact_lock(hashtext(${`provider_float:${provider}`}))`);
    const [sample] = await queryRows<{ id: string; sampled_at: Date | string; previous: Date | string | null }>(
      tx,
      sql`with previous as (
            select sampled_at from provider_float_samples where provider = ${provider} order by sampled_at desc, id desc limit 1
          )
          insert into provider_float_samples (provider, balance_kobo, reconciled_at)
          values (${provider}, ${balanceKobo}, now())
          returning id, sampled_at, (select sampled_at from previous) as previous`,
    );
    if (!sample || sample.previous === null) return null;
    const { steps } = await floatSteps(tx, provider, new Date(sample.previous), new Date(sample.sampled_at), toleranceKobo);
    const step = steps.at(-1);
    if (!step || step.withinTolerance) return step ?? null;
    await raiseAnomaly(tx, logger, { kind: "float_mismatch", provider, message: mismatchMessage(provider, step, toleranceKobo) });
    return step;
  });
}

function mismatchMessage(provider: string, step: FloatStep, toleranceKobo: number): string {
  const ngn = (kobo: number) => `NGN ${formatNgn(kobo)}`;
  return (
    `${provider}'s float moved by ${ngn(step.actualChangeKobo)} between ${step.fromSampledAt.toISOString()} and ` +
    `${step.toSampledAt.toISOString()}; expected ${ngn(step.expectedChangeKobo)} (top-ups ${ngn(step.topupsKobo)}, ` +
    `costs ${ngn(step.costsKobo)}, reversals ${ngn(step.reversalsKobo)}): a difference of ${ngn(step.differenceKobo)}, ` +
    `beyond the tolerance of ${ngn(toleranceKobo)}`
  );
}
