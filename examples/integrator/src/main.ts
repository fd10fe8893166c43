import { randomUUID } from "node:crypto";
import { VendClient } from "@vend/sdk";
import { readConfig } from "./config.js";
import { buyAirtime, fundTestWallet, recentFailures } from "./vending.js";

const config = readConfig();
const vend = new VendClient({ apiKey: config.apiKey, baseUrl: config.baseUrl });

if (vend.mode === "test") console.log(`funded: available ${await fundTestWallet(vend, 5_000_000)} kobo`);
const airtime = await buyAirtime(vend, "08031234567", 10_000, `order-${randomUUID()}`);
console.log(`vend ${airtime.reference}: ${airtime.status}, paid ${airtime.price_kobo} kobo`);
const failed = await recentFailures(vend, 20);
console.log(`failed recently: ${failed.length}`);
for (const transaction of failed) console.log(`  ${transaction.reference} ${transaction.metadata.failure_code ?? ""}`);
