import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { tell } from "../../prompt.ts";
import { checkAmountFlag } from "../../vend/amount.ts";
import { askSmartcard } from "../../vend/ask.ts";
import { findProduct, pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { amountOption, billerOption, type CommonVendFlags, phoneOption, productOption, vendCommand } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend, vendTo } from "../../vend/submit.ts";

type CableFlags = CommonVendFlags & { biller?: string; smartcard?: string; product?: string; phone?: string; amount?: string };

async function payCable(flags: CableFlags, command: Command): Promise<void> {
  const vend = openVend(command, flags, { "--biller": flags.biller, "--smartcard": flags.smartcard, "--product": flags.product });
  const { amountKobo } = vend;
  const biller = flags.biller ?? (await pickNetwork(vend.client, "cable", "Biller"));
  if (flags.product && amountKobo !== undefined) {
    checkAmountFlag(await findProduct(vend.client, flags.product, "cable", biller), amountKobo);
  }
  const smartcard = flags.smartcard ?? (await askSmartcard());
  let customer = "";
  if (vend.canAsk) {
    const body = { biller, smartcard_number: smartcard };
    const found = await unwrap(vend.client.POST("/api/v1/bills/cable/verify", { body }));
    const who = `${found.customer_name}${found.current_bouquet ? `, now on ${found.current_bouquet}` : ""}`;
    tell(`Customer: ${who}`);
    customer = ` (${who})`;
  }
  let productCode = flags.product;
  if (!productCode) {
    const picked = await pickProduct(vend.client, biller, "cable");
    checkAmountFlag(picked, amountKobo);
    productCode = picked.code;
  }
  const code = productCode;
  const quote = () => quotePrice(vend.client, code, biller, "cable", undefined);
  await confirmPrice(vend, quote, `Pay ${productCode} for smartcard ${smartcard}${customer}`);
  const body = {
    network: biller,
    smartcard_number: smartcard,
    product_code: productCode,
    ...(flags.phone ? { phone_number: flags.phone } : {}),
    ...(amountKobo === undefined ? {} : { amount_kobo: amountKobo }),
  };
  await submitVend(vend, flags, body, vendTo.cable);
}

export const cableCommand = (): Command =>
  vendCommand(
    new Command("cable")
      .description("Pay a cable TV bouquet (POST /api/v1/bills/cable)")
      .addOption(billerOption())
      .option("--smartcard <number>", "smartcard or IUC number (10 to 12 digits)")
      .addOption(productOption("bouquet code from `vendctl catalogue products --service cable`"))
      .addOption(phoneOption("customer phone number"))
      .addOption(amountOption("optional: a bouquet has a fixed price; if given, it must be that price")),
    "vendctl vend cable --biller dstv --smartcard 7031234567 --product dstv-compact --yes",
    payCable,
  );
