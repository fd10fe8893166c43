import type { ServiceCode } from "../../generated/constants.ts";
import { discountedPrice, formatNgn } from "../../src/lib/shared/money.ts";
import { unwrap, type VendClient } from "../client.ts";
import { UsageError } from "../errors.ts";
import { choose } from "../prompt.ts";
import type { Product } from "../views.ts";

/** The mobile networks of airtime and data, as `--network` help names them (pickNetwork offers the live ones). */
export const phoneNetworks = "mtn, airtel, glo or 9mobile";

/** Asks for a network, disco or biller from the live catalogue. */
export async function pickNetwork(client: VendClient, service: ServiceCode, message: string): Promise<string> {
  const networks = await unwrap(client.GET("/api/v1/catalogue/networks", { params: { query: { service } } }));
  return choose(
    message,
    networks.map((n) => ({ name: `${n.name} (${n.code})`, value: n.code })),
  );
}

/** The active products of `service` on `network` (on every network when it is empty or undefined). */
export function products(client: VendClient, network: string | undefined, service: ServiceCode): Promise<Product[]> {
  return unwrap(client.GET("/api/v1/catalogue/products", { params: { query: { service, ...(network ? { network } : {}) } } }));
}

/** The active product `code` of `service` (on `network` when known), or undefined when the catalogue lacks it. */
export async function findProduct(
  client: VendClient,
  code: string,
  service: ServiceCode,
  network?: string,
): Promise<Product | undefined> {
  return (await products(client, network, service)).find((p) => p.code === code);
}

const productLabel = (p: Product): string =>
  p.kind === "fixed" && p.price_kobo !== null ? `${p.name} — NGN ${formatNgn(p.price_kobo)}` : p.name;

/** Asks for a product of the live catalogue. */
export async function pickProduct(client: VendClient, network: string, service: ServiceCode): Promise<Product> {
  const list = await products(client, network, service);
  if (list.length === 0) throw new UsageError(`no ${service} products for "${network}"; see vendctl catalogue products`);
  return choose(
    "Product",
    list.map((p) => ({ name: productLabel(p), value: p, description: p.code })),
  );
}

/** The single product of a network for a service where there is one per network (airtime). */
export async function onlyProduct(client: VendClient, network: string, service: ServiceCode): Promise<Product> {
  const [first] = await products(client, network, service);
  if (!first) throw new UsageError(`no ${service} product for "${network}"; see vendctl catalogue networks`);
  return first;
}

/**
 * The product `code` names (`product` undefined when the catalogue lacks it: the API then says why), or
 * without a code the network's only product of the service.
 */
export async function namedOrOnlyProduct(
  client: VendClient,
  network: string,
  service: ServiceCode,
  code: string | undefined,
): Promise<{ code: string; product: Product | undefined }> {
  if (code) return { code, product: await findProduct(client, code, service, network) };
  const product = await onlyProduct(client, network, service);
  return { code: product.code, product };
}

/** What the wallet will pay, from GET /api/v1/pricing. */
export async function quotePrice(
  client: VendClient,
  productCode: string,
  network: string,
  service: ServiceCode,
  amountKobo: number | undefined,
): Promise<number | undefined> {
  const items = await unwrap(client.GET("/api/v1/pricing", { params: { query: { network, service } } }));
  const item = items.find((i) => i.product_code === productCode);
  if (!item) return undefined;
  if (item.kind === "fixed") return item.price_kobo ?? undefined;
  if (amountKobo === undefined) return undefined;
  return discountedPrice(amountKobo, item.discount_bps);
}

export const describePrice = (priceKobo: number | undefined): string =>
  priceKobo === undefined ? "the catalogue price" : `NGN ${formatNgn(priceKobo)}`;
