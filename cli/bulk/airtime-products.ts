import type { VendClient } from "../client.ts";
import { ApiError } from "../errors.ts";
import { products } from "../vend/catalogue.ts";
import type { BulkOrder, RowProblem } from "./orders.ts";

/**
 * Fills in the product code of airtime rows that name only a network: the network's airtime product in the
 * live catalogue (one request per network). A network without one is a problem of each such row.
 */
export async function resolveAirtimeProducts(client: VendClient, orders: BulkOrder[]): Promise<RowProblem[]> {
  const networks = new Set(orders.flatMap((o) => (o.needsAirtimeProduct ? [o.needsAirtimeProduct] : [])));
  const codes = new Map<string, string | undefined>();
  for (const network of networks) {
    try {
      codes.set(network, (await products(client, network, "airtime"))[0]?.code);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      codes.set(network, undefined);
    }
  }
  const problems: RowProblem[] = [];
  for (const order of orders) {
    const network = order.needsAirtimeProduct;
    if (!network) continue;
    const code = codes.get(network);
    if (code) order.order = { ...order.order, product_code: code };
    else
      problems.push({ line: order.line, message: `no airtime product for network "${network}"; see vendctl catalogue networks` });
  }
  return problems;
}
