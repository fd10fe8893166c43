import { Command, Option } from "commander";
import { type MeterType, meterTypes } from "../../../generated/constants.ts";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { type Choice, choose } from "../../prompt.ts";
import { checkAmountFlag, rangeOf } from "../../vend/amount.ts";
import { askAmount, askMeter } from "../../vend/ask.ts";
import { findProduct, pickNetwork, products, quotePrice } from "../../vend/catalogue.ts";
import { verifyMeterAsking } from "../../vend/meter.ts";
import { amountOption, type CommonVendFlags, phoneOption, productOption, vendCommand } from "../../vend/options.ts";
import { confirmPrice, openVend, type VendSession } from "../../vend/session.ts";
import { submitVend, vendTo } from "../../vend/submit.ts";

type ElectricityFlags = CommonVendFlags & {
  disco?: string;
  meter?: string;
  meterType?: MeterType;
  amount?: string;
  phone?: string;
  product?: string;
};

const meterTypeChoices = meterTypes.map((type): Choice<MeterType> => ({ name: type, value: type }));

/** The product sold: --product, or the disco's product for this meter type (undefined when the catalogue lacks it). */
async function electricityProduct(vend: VendSession, flags: ElectricityFlags, disco: string, meterType: MeterType) {
  if (flags.product) return findProduct(vend.client, flags.product, "electricity", disco);
  return (await products(vend.client, disco, "electricity")).find((p) => p.meter_type === meterType);
}

async function buyElectricity(flags: ElectricityFlags, command: Command): Promise<void> {
  const vend = openVend(command, flags, { "--disco": flags.disco, "--meter": flags.meter, "--amount": flags.amount });
  const disco = flags.disco ?? (await pickNetwork(vend.client, "electricity", "Disco"));
  let meter = flags.meter ?? (await askMeter());
  const meterType = flags.meterType ?? (vend.canAsk ? await choose("Meter type", meterTypeChoices) : "prepaid");
  const product = await electricityProduct(vend, flags, disco, meterType);
  checkAmountFlag(product, vend.amountKobo);
  let customerName = "";
  let floorKobo = 0;
  if (vend.canAsk) {
    const verified = await verifyMeterAsking(vend.client, disco, meter, meterType);
    meter = verified.meter;
    customerName = ` (${verified.customer.customer_name})`;
    floorKobo = verified.customer.min_amount_kobo;
    checkAmountFlag(product, vend.amountKobo, floorKobo);
  }
  const amountKobo = vend.amountKobo ?? (await askAmount("5000", product && rangeOf(product, floorKobo)));
  const code = product?.code ?? flags.product;
  await confirmPrice(
    vend,
    async () => (code ? quotePrice(vend.client, code, disco, "electricity", amountKobo) : undefined),
    `Buy NGN ${formatNgn(amountKobo)} of ${meterType} electricity from ${disco} for meter ${meter}${customerName}`,
  );
  const body = {
    network: disco,
    meter_number: meter,
    meter_type: meterType,
    amount_kobo: amountKobo,
    ...(flags.phone ? { phone_number: flags.phone } : {}),
    ...(flags.product ? { product_code: flags.product } : {}),
  };
  await submitVend(vend, flags, body, vendTo.electricity);
}

export const electricityCommand = (): Command =>
  vendCommand(
    new Command("electricity")
      .description("Buy electricity for a prepaid or postpaid meter (POST /api/v1/bills/electricity)")
      .option("--disco <code>", "distribution company: ikedc, ekedc, aedc, …")
      .option("--meter <number>", "meter number (11 to 13 digits)")
      .addOption(new Option("--meter-type <type>", "meter type (default prepaid)").choices(meterTypes))
      .addOption(amountOption("amount in NGN, at least 1000"))
      .addOption(phoneOption("customer phone number that receives the token"))
      .addOption(productOption("product code (default: the disco's product for the meter type)")),
    "vendctl vend electricity --disco ikedc --meter 45031234567 --meter-type prepaid --amount 5000 --yes",
    buyElectricity,
  );
