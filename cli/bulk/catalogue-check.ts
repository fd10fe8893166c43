import type { ServiceCode } from "../../generated/constants.ts";
import type { VendClient } from "../client.ts";
import { ApiError } from "../errors.ts";
import { amountProblem } from "../vend/amount.ts";
import { products } from "../vend/catalogue.ts";
import type { Product } from "../views.ts";
import type { BulkOrder, RowProblem } from "./orders.ts";

/** The catalogue's active products of a service on a network (every network when ""); none for a code it refuses. */
async function productsOn(client: VendClient, service: ServiceCode, network: string): Promise<Product[]> {
  try {
    return await products(client, network, service);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return [];
    throw error;
  }
}

const columnOf: Record<ServiceCode, string> = { airtime: "network", data: "network", electricity: "disco", cable: "biller" };

/** A field of an order as `readOrders` built it (the API's type leaves service-specific fields open). */
const textOf = (order: BulkOrder, field: string): string => {
  const value = order.order[field];
  return typeof value === "string" ? value : "";
};
const amountOf = (order: BulkOrder): number | undefined => {
  const value = order.order.amount_kobo;
  return typeof value === "number" ? value : undefined;
};

/** The product a row buys, as the single vend finds it: its code, the network's airtime product, the disco's for the meter type. */
function productOf(order: BulkOrder, list: Product[]): Product | undefined {
  const code = textOf(order, "product_code");
  if (code) return list.find((p) => p.code === code);
  if (order.order.service === "airtime") return list[0];
  const meterType = textOf(order, "meter_type") || "prepaid";
  if (order.order.service === "electricity") return list.find((p) => p.meter_type === meterType);
  return undefined;
}

/**
 * Checks every row against the live catalogue before anything is sent, as the single vend checks its flags:
 * a network, disco or biller with nothing on sale for the service, and an amount the row's product would
 * refuse (outside a range product's range, or not a fixed product's price), in NGN. Airtime rows naming only
 * a network get the network's airtime product. A product code the catalogue lacks is left to the service, as
 * the single vend leaves it: that row alone is `invalid` in the results. One request per service and network.
 */
export async function checkAgainstCatalogue(client: VendClient, orders: BulkOrder[]): Promise<RowProblem[]> {
  const lists = new Map<string, Product[]>();
  const problems: RowProblem[] = [];
  for (const order of orders) {
    const { service } = order.order;
    const network = textOf(order, "network");
    const key = `${service}/${network}`;
    let list = lists.get(key);
    if (!list) {
      list = await productsOn(client, service, network);
      lists.set(key, list);
    }
    if (list.length === 0) {
      const message = order.needsAirtimeProduct
        ? `no airtime product for network "${network}"; see vendctl catalogue networks`
        : `no ${service} products for ${columnOf[service]} "${network}"; see vendctl catalogue networks`;
      problems.push({ line: order.line, message });
      continue;
    }
    const product = productOf(order, list);
    if (order.needsAirtimeProduct && product) order.order = { ...order.order, product_code: product.code };
    const problem = amountProblem(product, amountOf(order), { source: "column" });
    if (problem) problems.push({ line: order.line, message: problem });
  }
  return problems;
}
