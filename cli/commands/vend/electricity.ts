import { Command, Option } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { formatNgn, parseNgn } from "../../money.ts";
import { ask, choose, requireFlags } from "../../prompt.ts";
import { describePrice, pickNetwork, products, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, type CommonVendFlags, commonBody, validMeter, vendParams } from "../../vend/options.ts";
import { confirmVend, submitVend } from "../../vend/submit.ts";

type MeterType = "prepaid" | "postpaid";

interface ElectricityFlags extends CommonVendFlags {
  disco?: string;
  meter?: string;
  meterType?: MeterType;
  amount?: string;
  phone?: string;
  product?: string;
}

const validAmount = (value: string): true | string => /^\d+(\.\d{1,2})?$/.test(value.trim()) || "an amount in NGN, e.g. 5000";

export const electricityCommand = withExample(
  addCommonVendOptions(
    new Command("electricity")
      .description("Buy electricity for a prepaid or postpaid meter (POST /api/v1/bills/electricity)")
      .option("--disco <code>", "distribution company: ikedc, ekedc, aedc, …")
      .option("--meter <number>", "meter number (11 to 13 digits)")
      .addOption(new Option("--meter-type <type>", "meter type (default prepaid)").choices(["prepaid", "postpaid"]))
      .option("--amount <ngn>", "amount in NGN, at least 1000")
      .option("--phone <number>", "customer phone number that receives the token")
      .option("--product <code>", "product code (default: the disco's product for the meter type)"),
  ),
  "vendctl vend electricity --disco ikedc --meter 45031234567 --meter-type prepaid --amount 5000 --yes",
).action(async (flags: ElectricityFlags, command: Command) => {
  const ctx = contextOf(command);
  const canAsk = ctx.interactive && !flags.yes;
  let amountKobo = flags.amount === undefined ? undefined : parseNgn(flags.amount, "--amount");
  requireFlags({ "--disco": flags.disco, "--meter": flags.meter, "--amount": flags.amount }, canAsk);
  const client = ctx.clients.api();
  const disco = flags.disco ?? (await pickNetwork(client, "electricity", "Disco"));
  const meter = flags.meter ?? (await ask("Meter number", { validate: validMeter }));
  const meterType: MeterType =
    flags.meterType ??
    (canAsk
      ? await choose<MeterType>("Meter type", [
          { name: "prepaid", value: "prepaid" },
          { name: "postpaid", value: "postpaid" },
        ])
      : "prepaid");
  amountKobo ??= parseNgn(await ask("Amount (NGN)", { validate: validAmount }));
  if (canAsk) {
    const customer = await unwrap(
      client.POST("/api/v1/bills/electricity/verify", { body: { network: disco, meter_number: meter, meter_type: meterType } }),
    );
    const code = flags.product ?? (await products(client, disco, "electricity")).find((p) => p.meter_type === meterType)?.code;
    const price = code ? await quotePrice(client, code, disco, "electricity", amountKobo) : undefined;
    await confirmVend(
      ctx,
      flags,
      `Buy NGN ${formatNgn(amountKobo)} of ${meterType} electricity from ${disco} for meter ${meter} (${customer.customer_name}), paying ${describePrice(price)}?`,
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
  await submitVend(ctx, flags, (api, key) => api.POST("/api/v1/bills/electricity", { params: vendParams(key, flags), body }));
});
