import { Command } from "commander";
import { contextOf, withExample } from "../../context.ts";
import { parseNgn } from "../../money.ts";
import { ask, requireFlags } from "../../prompt.ts";
import { describePrice, pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, type CommonVendFlags, commonBody, validPhone, vendParams } from "../../vend/options.ts";
import { confirmVend, submitVend } from "../../vend/submit.ts";

interface DataFlags extends CommonVendFlags {
  network?: string;
  phone?: string;
  product?: string;
  amount?: string;
}

export const dataCommand = withExample(
  addCommonVendOptions(
    new Command("data")
      .description("Buy a data bundle for a phone number (POST /api/v1/vend)")
      .option("--product <code>", "bundle code from `vendctl catalogue products --service data`")
      .option("--phone <number>", "the phone number that receives the bundle")
      .option("--network <code>", "mtn, airtel, glo or 9mobile (checked against the bundle)")
      .option("--amount <ngn>", "optional; must equal the bundle price"),
  ),
  "vendctl vend data --product mtn-data-1gb-1d --phone 08031234567 --yes",
).action(async (flags: DataFlags, command: Command) => {
  const ctx = contextOf(command);
  const canAsk = ctx.interactive && !flags.yes;
  const amountKobo = flags.amount === undefined ? undefined : parseNgn(flags.amount, "--amount");
  requireFlags({ "--product": flags.product, "--phone": flags.phone }, canAsk);
  const client = ctx.clients.api();
  let network = flags.network;
  let productCode = flags.product;
  if (!productCode) {
    network ??= await pickNetwork(client, "data", "Network");
    productCode = (await pickProduct(client, network, "data")).code;
  }
  const phone = flags.phone ?? (await ask("Phone number", { validate: validPhone }));
  if (canAsk) {
    const price = network ? await quotePrice(client, productCode, network, "data", amountKobo) : undefined;
    await confirmVend(ctx, flags, `Buy ${productCode} for ${phone}, paying ${describePrice(price)}?`);
  }
  const body = {
    product_code: productCode,
    phone_number: phone,
    ...(network ? { network } : {}),
    ...(amountKobo === undefined ? {} : { amount_kobo: amountKobo }),
    ...commonBody(flags),
  };
  await submitVend(ctx, flags, (api, key) => api.POST("/api/v1/vend", { params: vendParams(key, flags), body }));
});
