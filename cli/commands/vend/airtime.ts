import { Command } from "commander";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { checkAmountFlag, rangeOf } from "../../vend/amount.ts";
import { askAmount, askPhone } from "../../vend/ask.ts";
import { namedOrOnlyProduct, phoneNetworks, pickNetwork, quotePrice } from "../../vend/catalogue.ts";
import { amountOption, type CommonVendFlags, phoneOption, productOption, vendCommand } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend, vendTo } from "../../vend/submit.ts";

type AirtimeFlags = CommonVendFlags & { network?: string; phone?: string; amount?: string; product?: string };

async function buyAirtime(flags: AirtimeFlags, command: Command): Promise<void> {
  const vend = openVend(command, flags, { "--network": flags.network, "--phone": flags.phone, "--amount": flags.amount });
  const network = flags.network ?? (await pickNetwork(vend.client, "airtime", "Network"));
  const { code: productCode, product } = await namedOrOnlyProduct(vend.client, network, "airtime", flags.product);
  checkAmountFlag(product, vend.amountKobo);
  const phone = flags.phone ?? (await askPhone());
  const amountKobo = vend.amountKobo ?? (await askAmount("100", product && rangeOf(product)));
  await confirmPrice(
    vend,
    () => quotePrice(vend.client, productCode, network, "airtime", amountKobo),
    `Buy NGN ${formatNgn(amountKobo)} ${network} airtime for ${phone}`,
  );
  const body = { product_code: productCode, network, phone_number: phone, amount_kobo: amountKobo };
  await submitVend(vend, flags, body, vendTo.phone);
}

export const airtimeCommand = (): Command =>
  vendCommand(
    new Command("airtime")
      .description("Buy airtime for a phone number (POST /api/v1/vend)")
      .option("--network <code>", phoneNetworks)
      .addOption(phoneOption("the phone number to top up"))
      .addOption(amountOption("face value in NGN, e.g. 100 or 100.50"))
      .addOption(productOption("product code (default: the network's airtime product)")),
    "vendctl vend airtime --network mtn --phone 08031234567 --amount 100 --wait 20 --yes --json",
    buyAirtime,
  );
