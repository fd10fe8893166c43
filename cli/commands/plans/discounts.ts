import { InvalidArgumentError } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";

export type PricePlan = components["schemas"]["PricePlan"];
export type PriceDiscount = components["schemas"]["PriceDiscount"];
type Scope = PriceDiscount["scope"];

const scopes: readonly Scope[] = ["service", "network", "product"];

/** `scope:code` (the server checks that the code exists). */
export function scopeCode(value: string): { scope: Scope; code: string } {
  const match = /^([a-z]+):(.+)$/.exec(value);
  const scope = match?.[1] as Scope | undefined;
  if (!match?.[2] || !scope || !scopes.includes(scope)) {
    throw new InvalidArgumentError("expected scope:code, scope one of service, network, product (e.g. network:mtn)");
  }
  return { scope, code: match[2] };
}

/** `scope:code=bps`, repeatable. */
export function collectDiscount(value: string, previous: PriceDiscount[] = []): PriceDiscount[] {
  const at = value.lastIndexOf("=");
  const bps = Number(value.slice(at + 1));
  if (at < 0 || !Number.isInteger(bps) || bps < 0 || bps > 10_000 || value.slice(at + 1).trim() === "") {
    throw new InvalidArgumentError("expected scope:code=bps, basis points from 0 to 10000 (e.g. service:data=300)");
  }
  return [...previous, { ...scopeCode(value.slice(0, at)), discount_bps: bps }];
}

/** `scope:code`, repeatable. */
export const collectScopeCode = (value: string, previous: { scope: Scope; code: string }[] = []) => [
  ...previous,
  scopeCode(value),
];

/** `service:data=300 product:mtn-airtime=450`, or `-` for none. */
export const describeDiscounts = (discounts: readonly PriceDiscount[]): string =>
  discounts.length === 0 ? "-" : discounts.map((d) => `${d.scope}:${d.code}=${d.discount_bps}`).join(" ");
