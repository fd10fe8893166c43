import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { askSmartcard } from "../../vend/ask.ts";
import { pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { billerOption, type CommonVendFlags, phoneOption, productOption, vendCommand } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend } from "../../vend/submit.ts";

type CableFlags = CommonVendFlags & { biller?: string; smartcard?: string; product?: string; phone?: string };

async function payCable(flags: CableFlags, command: Command): Promise<void> {
  const vend = openVend(command, flags, { "--biller": flags.biller, "--smartcard": flags.smartcard, "--product": flags.product });
  const biller = flags.biller ?? (await pickNetwork(vend.client, "cable", "Biller"));
  const smartcard = flags.smartcard ?? (await askSmartcard());
  let customer = "";
  if (vend.canAsk) {
    const body = { network: biller, smartcard_number: smartcard };
    const found = await unwrap(vend.client.POST("/api/v1/bills/cable/verify", { body }));
    customer = ` (${found.customer_name}${found.current_bouquet ? `, now on ${found.current_bouquet}` : ""})`;
  }
  const productCode = flags.product ?? (await pickProduct(vend.client, biller, "cable")).code;
  const quote = () => quotePrice(vend.client, productCode, biller, "cable", undefined);
  await confirmPrice(vend, quote, `Pay ${productCode} for smartcard ${smartcard}${customer}`);
  const phone = flags.phone ? { phone_number: flags.phone } : {};
  const body = { network: biller, smartcard_number: smartcard, product_code: productCode, ...phone };
  await submitVend(vend, flags, body, (api, params, body) => api.POST("/api/v1/bills/cable", { params, body }));
}

export const cableCommand = vendCommand(
  new Command("cable")
    .description("Pay a cable TV bouquet (POST /api/v1/bills/cable)")
    .addOption(billerOption())
    .option("--smartcard <number>", "smartcard or IUC number (10 to 12 digits)")
    .addOption(productOption("bouquet code from `vendctl catalogue products --service cable`"))
    .addOption(phoneOption("customer phone number")),
  "vendctl vend cable --biller dstv --smartcard 7031234567 --product dstv-compact --yes",
  payCable,
);
