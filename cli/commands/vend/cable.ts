import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { withExample } from "../../context.ts";
import { ask } from "../../prompt.ts";
import { pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, type CommonVendFlags, commonBody, validSmartcard, vendParams } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend } from "../../vend/submit.ts";

interface CableFlags extends CommonVendFlags {
  biller?: string;
  smartcard?: string;
  product?: string;
  phone?: string;
}

export const cableCommand = withExample(
  addCommonVendOptions(
    new Command("cable")
      .description("Pay a cable TV bouquet (POST /api/v1/bills/cable)")
      .option("--biller <code>", "dstv, gotv, startimes or showmax")
      .option("--smartcard <number>", "smartcard or IUC number (10 to 12 digits)")
      .option("--product <code>", "bouquet code from `vendctl catalogue products --service cable`")
      .option("--phone <number>", "customer phone number"),
  ),
  "vendctl vend cable --biller dstv --smartcard 7031234567 --product dstv-compact --yes",
).action(async (flags: CableFlags, command: Command) => {
  const vend = openVend(command, flags, { "--biller": flags.biller, "--smartcard": flags.smartcard, "--product": flags.product });
  const biller = flags.biller ?? (await pickNetwork(vend.client, "cable", "Biller"));
  const smartcard = flags.smartcard ?? (await ask("Smartcard number", { validate: validSmartcard }));
  let customer = "";
  if (vend.canAsk) {
    const body = { network: biller, smartcard_number: smartcard };
    const found = await unwrap(vend.client.POST("/api/v1/bills/cable/verify", { body }));
    customer = ` (${found.customer_name}${found.current_bouquet ? `, now on ${found.current_bouquet}` : ""})`;
  }
  const productCode = flags.product ?? (await pickProduct(vend.client, biller, "cable")).code;
  const quote = () => quotePrice(vend.client, productCode, biller, "cable", undefined);
  await confirmPrice(vend, quote, `Pay ${productCode} for smartcard ${smartcard}${customer}`);
  const body = {
    network: biller,
    smartcard_number: smartcard,
    product_code: productCode,
    ...(flags.phone ? { phone_number: flags.phone } : {}),
    ...commonBody(flags),
  };
  await submitVend(vend, flags, (api, key) => api.POST("/api/v1/bills/cable", { params: vendParams(key, flags), body }));
});
