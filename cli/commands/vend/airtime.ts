import { Command } from "commander";
import { contextOf, withExample } from "../../context.ts";
import { formatNgn, parseNgn } from "../../money.ts";
import { ask, requireFlags } from "../../prompt.ts";
import { describePrice, onlyProduct, pickNetwork, quotePrice } from "../../vend/catalogue.ts";
import { addCommonVendOptions, type CommonVendFlags, commonBody, validPhone, vendParams } from "../../vend/options.ts";
import { confirmVend, submitVend } from "../../vend/submit.ts";

interface AirtimeFlags extends CommonVendFlags {
  network?: string;
  phone?: string;
  amount?: string;
  product?: string;
}

const validAmount = (value: string): true | string => /^\d+(\.\d{1,2})?$/.test(value.trim()) || "an amount in NGN, e.g. 100";

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
  const ctx = contextOf(command);
  const canAsk = ctx.interactive && !flags.yes;
  let amountKobo = flags.amount === undefined ? undefined : parseNgn(flags.amount, "--amount");
  requireFlags({ "--network": flags.network, "--phone": flags.phone, "--amount": flags.amount }, canAsk);
  const client = ctx.clients.api();
  const network = flags.network ?? (await pickNetwork(client, "airtime", "Network"));
  const productCode = flags.product ?? (await onlyProduct(client, network, "airtime")).code;
  const phone = flags.phone ?? (await ask("Phone number", { validate: validPhone }));
  amountKobo ??= parseNgn(await ask("Amount (NGN)", { validate: validAmount }));
  if (canAsk) {
    const price = await quotePrice(client, productCode, network, "airtime", amountKobo);
    await confirmVend(
      ctx,
      flags,
      `Buy NGN ${formatNgn(amountKobo)} ${network} airtime for ${phone}, paying ${describePrice(price)}?`,
    );
  }
  const body = { product_code: productCode, network, phone_number: phone, amount_kobo: amountKobo, ...commonBody(flags) };
  await submitVend(ctx, flags, (api, key) => api.POST("/api/v1/vend", { params: vendParams(key, flags), body }));
});
