import type { Commission, RoutingConfig } from "../config.ts";
import type { Mode } from "../lib/scope.ts";

/** What an order is, as far as its cost at a provider goes. */
export interface CostedOrder {
  mode: Mode;
  service: string;
  network: string;
  amountKobo: number;
}

/**
 * The commission rule that applies to `provider` for an order: `service/network`, else `service/*`, else
 * `*\/*`. A test-mode order (the sandbox) costs nothing: its commission is the whole face value.
 */
function ruleFor(routing: Pick<RoutingConfig, "commission">, provider: string, order: CostedOrder): Commission | undefined {
  if (order.mode === "test") return { bps: 10_000 };
  const schedule = routing.commission[provider];
  if (!schedule) return undefined;
  return schedule[`${order.service}/${order.network}`] ?? schedule[`${order.service}/*`] ?? schedule["*/*"];
}

/**
 * What `provider` charges our float for one order: its face value less the provider's commission (basis
 * points rounded down, or a fixed amount, never more than the face value). Without a commission: the face value.
 */
export function providerCostKobo(routing: Pick<RoutingConfig, "commission">, provider: string, order: CostedOrder): number {
  const rule = ruleFor(routing, provider, order);
  if (!rule) return order.amountKobo;
  const commission = "bps" in rule ? Math.floor((order.amountKobo * rule.bps) / 10_000) : rule.fixedKobo;
  return order.amountKobo - Math.min(commission, order.amountKobo);
}

/**
 * The schedule as the claim statement reads it (a JSON parameter): `provider/service/network` →
 * `{bps}` or `{fixed_kobo}`, with `*` for any; the sandbox and every test-mode order are free there too.
 */
export function commissionTable(routing: Pick<RoutingConfig, "commission">): string {
  const table: Record<string, { bps: number } | { fixed_kobo: number }> = {};
  for (const [provider, schedule] of Object.entries(routing.commission)) {
    for (const [key, rule] of Object.entries(schedule)) {
      table[`${provider}/${key}`] = "bps" in rule ? { bps: rule.bps } : { fixed_kobo: rule.fixedKobo };
    }
  }
  return JSON.stringify(table);
}
