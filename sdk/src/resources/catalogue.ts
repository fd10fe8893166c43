import type { CallOptions } from "../core/options.js";
import type { Requester } from "../core/requester.js";
import { getPricing, listNetworks, listProducts, listServices } from "../generated/client/sdk.gen.js";
import type { GetPricingData, ListNetworksData, ListProductsData } from "../generated/client/types.gen.js";

/** Networks, services, products and prices; each a whole list (no paging). */
export class Catalogue {
  constructor(private readonly requester: Requester) {}

  networks(query: ListNetworksData["query"] = {}, options: CallOptions = {}) {
    return this.requester.unwrap(listNetworks({ ...this.requester.with(options), query }));
  }

  services(options: CallOptions = {}) {
    return this.requester.unwrap(listServices({ ...this.requester.with(options) }));
  }

  products(query: ListProductsData["query"] = {}, options: CallOptions = {}) {
    return this.requester.unwrap(listProducts({ ...this.requester.with(options), query }));
  }

  /** What the wallet pays per product. */
  pricing(query: GetPricingData["query"] = {}, options: CallOptions = {}) {
    return this.requester.unwrap(getPricing({ ...this.requester.with(options), query }));
  }
}
