import type { MeterType } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { unwrap, type VendClient } from "../client.ts";
import { ApiError } from "../errors.ts";
import { tell } from "../prompt.ts";
import { askMeter } from "./ask.ts";

type MeterVerification = components["schemas"]["MeterVerification"];

/**
 * Looks the meter up before anything else is asked, and while no customer has the number, says so and asks
 * for it again (the disco and meter type stay as answered). Shows whose meter it is.
 */
export async function verifyMeterAsking(
  client: VendClient,
  disco: string,
  meter: string,
  meterType: MeterType,
): Promise<{ meter: string; customer: MeterVerification }> {
  for (let number = meter; ; number = await askMeter()) {
    const body = { network: disco, meter_number: number, meter_type: meterType };
    try {
      const customer = await unwrap(client.POST("/api/v1/bills/electricity/verify", { body }));
      tell(`Customer: ${customer.customer_name}${customer.address ? `, ${customer.address}` : ""}`);
      return { meter: number, customer };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "CUSTOMER_NOT_FOUND") throw error;
      tell(`No customer has meter ${number} at ${disco} (${meterType}); check the number and type it again`);
    }
  }
}
