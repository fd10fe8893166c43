import { Command } from "commander";
import { checkAmountFlag } from "../../vend/amount.ts";
import { askPhone } from "../../vend/ask.ts";
import { findProduct, phoneNetworks, pickNetwork, pickProduct, quotePrice } from "../../vend/catalogue.ts";
import { amountOption, type CommonVendFlags, phoneOption, productOption, vendCommand } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend, vendTo } from "../../vend/submit.ts";

type DataFlags = CommonVendFlags & { network?: string; phone?: string; product?: string; amount?: string };

async function buyData(flags: DataFlags, command: Command): Promise<void> {
  const vend = openVend(command, flags, { "--product": flags.product, "--phone": flags.phone });
  const { amountKobo } = vend;
  let network = flags.network;
  let productCode = flags.product;
  if (!productCode) {
    network ??= await pickNetwork(vend.client, "data", "Network");
    const picked = await pickProduct(vend.client, network, "data");
    checkAmountFlag(picked, amountKobo);
    productCode = picked.code;
  } else if (amountKobo !== undefined) {
    checkAmountFlag(await findProduct(vend.client, productCode, "data", network), amountKobo);
  }
  const phone = flags.phone ?? (await askPhone());
  const code = productCode;
  const quote = async () => (network ? quotePrice(vend.client, code, network, "data", amountKobo) : undefined);
  await confirmPrice(vend, quote, `Buy ${productCode} for ${phone}`);
  const body = {
    product_code: productCode,
    phone_number: phone,
    ...(network ? { network } : {}),
    ...(amountKobo === undefined ? {} : { amount_kobo: amountKobo }),
  };
  await submitVend(vend, flags, body, vendTo.phone);
}

export const dataCommand = (): Command =>
  vendCommand(
    new Command("data")
      .description("Buy a data bundle for a phone number (POST /api/v1/vend)")
      .addOption(productOption("bundle code from `vendctl catalogue products --service data`"))
      .addOption(phoneOption("the phone number that receives the bundle"))
      .option("--network <code>", `${phoneNetworks} (checked against the bundle)`)
      .addOption(amountOption("optional: a bundle has a fixed price; if given, it must be that price")),
    "vendctl vend data --product mtn-data-1gb-1d --phone 08031234567 --yes",
    buyData,
  );
