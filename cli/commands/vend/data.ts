import { Command } from "commander";
import { withExample } from "../../context.ts";
import { ask } from "../../prompt.ts";
import { pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, type CommonVendFlags, commonBody, validPhone, vendParams } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend } from "../../vend/submit.ts";

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
  const vend = openVend(command, flags, { "--product": flags.product, "--phone": flags.phone });
  const { amountKobo } = vend;
  let network = flags.network;
  let productCode = flags.product;
  if (!productCode) {
    network ??= await pickNetwork(vend.client, "data", "Network");
    productCode = (await pickProduct(vend.client, network, "data")).code;
  }
  const phone = flags.phone ?? (await ask("Phone number", { validate: validPhone }));
  const code = productCode;
  const quote = async () => (network ? quotePrice(vend.client, code, network, "data", amountKobo) : undefined);
  await confirmPrice(vend, quote, `Buy ${productCode} for ${phone}`);
  const body = {
    product_code: productCode,
    phone_number: phone,
    ...(network ? { network } : {}),
    ...(amountKobo === undefined ? {} : { amount_kobo: amountKobo }),
    ...commonBody(flags),
  };
  await submitVend(vend, flags, (api, key) => api.POST("/api/v1/vend", { params: vendParams(key, flags), body }));
});
