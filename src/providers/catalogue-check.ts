import { ConfigError, type RoutingConfig } from "../config.ts";
import { products } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";

/**
 * Checks the providers file against the catalogue, once the database is open: each route's network sells
 * its service, and each provider's product codes name catalogue products. Throws ConfigError naming the
 * entry, so start-up stops as for any other bad setting.
 */
export async function checkRoutingAgainstCatalogue(db: Executor, routing: RoutingConfig): Promise<void> {
  if (!routing.file) return;
  const entry = (name: string) => `PROVIDERS_FILE ${routing.file}: ${name}`;
  const rows = await db.select({ code: products.code, service: products.service, network: products.network }).from(products);
  const codes = new Set(rows.map((r) => r.code));
  routing.routes.forEach((route, index) => {
    if (route.network === undefined) return;
    const networks = [...new Set(rows.filter((r) => r.service === route.service).map((r) => r.network))].sort();
    if (!networks.includes(route.network)) {
      throw new ConfigError(
        entry(`routes[${index}].network`),
        `"${route.network}" sells no ${route.service} in the catalogue (it has: ${networks.join(", ")})`,
      );
    }
  });
  for (const [provider, codesOfProvider] of Object.entries(routing.productCodes)) {
    for (const code of Object.keys(codesOfProvider)) {
      if (!codes.has(code))
        throw new ConfigError(entry(`providers.${provider}.products.${code}`), "is not a product in the catalogue");
    }
  }
}
