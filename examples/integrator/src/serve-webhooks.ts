import { readConfig } from "./config.js";
import { createWebhookServer } from "./webhook-server.js";

const { webhookSecret } = readConfig();
if (!webhookSecret) throw new Error("Set VEND_WEBHOOK_SECRET to the endpoint's whsec_… secret");
const port = Number(process.env.PORT ?? 3000);
createWebhookServer(webhookSecret, (event) => {
  if (event.type === "transaction.successful" || event.type === "transaction.failed")
    console.log(`${event.id} ${event.type} ${event.data.reference} ${event.data.status}`);
  else console.log(`${event.id} ${event.type}`);
}).listen(port, () => console.log(`receiving webhooks on http://localhost:${port}/`));
