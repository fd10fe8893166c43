import { Command } from "commander";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { withExample } from "../../context.ts";
import { ask } from "../../prompt.ts";
import { onlyProduct, pickNetwork, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, askAmount, type CommonVendFlags, commonBody, validPhone, vendParams } from "../../vend/options.ts";
import { confirmPrice, openVend } from "../../vend/session.ts";
import { submitVend } from "../../vend/submit.ts";

interface AirtimeFlags extends CommonVendFlags {
  network?: string;
  phone?: string;
  amount?: string;
  product?: string;
}

export const airtimeCommand = withExample(
  addCommonVendOptions(
    new Command("airtime")
      .description("Buy airtime for a phone number (POST /api/v1/vend)")
      .option("--network <code>", "mtn, airtel, glo or 9mobile")
      .option("--phone <number>", "the phone number to top up")
      .option("--amount <ngn>", "face value in NGN, e.g. 100 or 100.50")
      .option("--product <code>", "product code (default: the network's airtime product)"),
  ),
  "vendctl vend airtime --network mtn --phone 08031234567 --amount 100 --wait 20 --yes --json",
).action(async (flags: AirtimeFlags, command: Command) => {
  const vend = openVend(command, flags, { "--network": flags.network, "--phone": flags.phone, "--amount": flags.amount });
  const network = flags.network ?? (await pickNetwork(vend.client, "airtime", "Network"));
  const productCode = flags.product ?? (await onlyProduct(vend.client, network, "airtime")).code;
  const phone = flags.phone ?? (await ask("Phone number", { validate: validPhone }));
  const amountKobo = vend.amountKobo ?? (await askAmount("100"));
  await confirmPrice(
    vend,
    () => quotePrice(vend.client, productCode, network, "airtime", amountKobo),
    `Buy NGN ${formatNgn(amountKobo)} ${network} airtime for ${phone}`,
  );
  const body = { product_code: productCode, network, phone_number: phone, amount_kobo: amountKobo, ...commonBody(flags) };
  await submitVend(vend, flags, (api, key) => api.POST("/api/v1/vend", { params: vendParams(key, flags), body }));
});
