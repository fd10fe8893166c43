import { Command, Option } from "commander";
import { type MeterType, meterTypes } from "../../../generated/constants.ts";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { unwrap } from "../../client.ts";
import { withExample } from "../../context.ts";
import { ask, choose } from "../../prompt.ts";
import { pickNetwork, products, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, askAmount, type CommonVendFlags, commonBody, validMeter, vendParams } from "../../vend/options.ts";
import { confirmPrice, openVend, type VendSession } from "../../vend/session.ts";
import { submitVend } from "../../vend/submit.ts";

interface ElectricityFlags extends CommonVendFlags {
  disco?: string;
  meter?: string;
  meterType?: MeterType;
  amount?: string;
  phone?: string;
  product?: string;
}

/** The price of the disco's product for this meter type (or of --product). */
async function electricityPrice(
  vend: VendSession,
  flags: ElectricityFlags,
  disco: string,
  meterType: MeterType,
  amountKobo: number,
) {
  const code = flags.product ?? (await products(vend.client, disco, "electricity")).find((p) => p.meter_type === meterType)?.code;
  return code ? quotePrice(vend.client, code, disco, "electricity", amountKobo) : undefined;
}

export const electricityCommand = withExample(
  addCommonVendOptions(
    new Command("electricity")
      .description("Buy electricity for a prepaid or postpaid meter (POST /api/v1/bills/electricity)")
      .option("--disco <code>", "distribution company: ikedc, ekedc, aedc, …")
      .option("--meter <number>", "meter number (11 to 13 digits)")
      .addOption(new Option("--meter-type <type>", "meter type (default prepaid)").choices(meterTypes))
      .option("--amount <ngn>", "amount in NGN, at least 1000")
      .option("--phone <number>", "customer phone number that receives the token")
      .option("--product <code>", "product code (default: the disco's product for the meter type)"),
  ),
  "vendctl vend electricity --disco ikedc --meter 45031234567 --meter-type prepaid --amount 5000 --yes",
).action(async (flags: ElectricityFlags, command: Command) => {
  const vend = openVend(command, flags, { "--disco": flags.disco, "--meter": flags.meter, "--amount": flags.amount });
  const disco = flags.disco ?? (await pickNetwork(vend.client, "electricity", "Disco"));
  const meter = flags.meter ?? (await ask("Meter number", { validate: validMeter }));
  const meterType: MeterType =
    flags.meterType ??
    (vend.canAsk
      ? await choose<MeterType>(
          "Meter type",
          meterTypes.map((type) => ({ name: type, value: type })),
        )
      : "prepaid");
  const amountKobo = vend.amountKobo ?? (await askAmount("5000"));
  if (vend.canAsk) {
    const body = { network: disco, meter_number: meter, meter_type: meterType };
    const customer = await unwrap(vend.client.POST("/api/v1/bills/electricity/verify", { body }));
    await confirmPrice(
      vend,
      () => electricityPrice(vend, flags, disco, meterType, amountKobo),
      `Buy NGN ${formatNgn(amountKobo)} of ${meterType} electricity from ${disco} for meter ${meter} (${customer.customer_name})`,
    );
  }
  const body = {
    network: disco,
    meter_number: meter,
    meter_type: meterType,
    amount_kobo: amountKobo,
    ...(flags.phone ? { phone_number: flags.phone } : {}),
    ...(flags.product ? { product_code: flags.product } : {}),
    ...commonBody(flags),
  };
  await submitVend(vend, flags, (api, key) => api.POST("/api/v1/bills/electricity", { params: vendParams(key, flags), body }));
});
