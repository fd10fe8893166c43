import { describe, expect, test } from "bun:test";
import { generateApiKey } from "../../src/auth/keys.ts";
import type { AnsweredRequest } from "../../src/lib/answered-request.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import { loadConfig } from "../../src/load-config.ts";
import { storedRecord } from "../../src/request-logs/recorder.ts";
import { configuredSecrets, cutUtf8, isSecretName, redactBody, redactQuery, scrubText } from "../../src/request-logs/redact.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";

/** The secret rules of the request log, case by case: what is replaced, what is masked, what is kept as sent. */
const request = (body: string, limitBytes = 16_384, secrets: string[] = []) =>
  redactBody(body, { limitBytes, masks: true, secrets });
const answer = (body: string, limitBytes = 16_384) => redactBody(body, { limitBytes, masks: false, secrets: [] });

const apiKey = generateApiKey("test").key;
const liveKey = generateApiKey("live").key;
const operatorToken = `op_${randomBase62(40)}`;
const webhookSecret = generateWebhookSecret();
const localSecret = `vlocal_${randomBase62(43)}`;

describe("the service's credentials, wherever they are", () => {
  test.each([
    ["an API key (test)", apiKey],
    ["an API key (live)", liveKey],
    ["an operator token", operatorToken],
    ["a webhook secret", webhookSecret],
    ["the local admin secret", localSecret],
  ])("%s in free text, in a JSON value, in an error message", (_, secret) => {
    expect(scrubText(`curl -H 'Authorization: Bearer ${secret}'`, [])).toBe("curl -H 'Authorization: Bearer [redacted]'");
    expect(answer(JSON.stringify({ data: { note: `sent ${secret}!` } })).text).toBe('{"data":{"note":"sent [redacted]!"}}');
    expect(request(`No route for GET /api/v1/${secret}`).text).toBe("No route for GET /api/v1/[redacted]");
  });

  test("a key's display prefix and an operator's stay: they are shown on purpose", () => {
    const listed = JSON.stringify({ data: { items: [{ prefix: apiKey.slice(0, 12) }, { prefix: operatorToken.slice(0, 7) }] } });
    expect(answer(listed).text).toBe(listed);
  });

  test("secrets the process knows, and no pattern catches, are replaced too", () => {
    expect(request('{"note":"the provider said abc-vtu-secret-123"}', 16_384, ["abc-vtu-secret-123"]).text).toBe(
      '{"note":"the provider said [redacted]"}',
    );
  });
});

describe("fields named for a secret", () => {
  test.each([
    ["key", true],
    ["api_key", true],
    ["apiKey", true],
    ["secret", true],
    ["client_secret", true],
    ["token", true],
    ["access_token", true],
    ["password", true],
    ["Password", true],
    ["passphrase", true],
    ["signature", true],
    ["authorization", true],
    ["private_key", true],
    ["pin", true],
    ["idempotency_key", false],
    ["key_id", false],
    ["key_prefix", false],
    ["product_code", false],
    ["previous_secret_expires_at", false],
    ["signature_valid", false],
    ["keys", false],
    ["reference", false],
  ])("%s: %p", (name, secret) => {
    expect(isSecretName(name)).toBe(secret);
  });

  test("string and number values replaced, everything else kept byte for byte (spacing, number spelling, order)", () => {
    const sent = '{ "name" : "acme",  "password":"hunter2" , "pin": 1234, "amount_kobo": 1.50e3, "key" :"k", "active": true }';
    expect(request(sent).text).toBe(
      '{ "name" : "acme",  "password":"[redacted]" , "pin": "[redacted]", "amount_kobo": 1.50e3, "key" :"[redacted]", "active": true }',
    );
  });

  test("nested fields, arrays of objects, a name written with escapes", () => {
    const sent = JSON.stringify({ keys: [{ mode: "test", key: "abc" }], deep: { deeper: { client_secret: "s3" } } });
    expect(JSON.parse(answer(sent).text)).toEqual({
      keys: [{ mode: "test", key: "[redacted]" }],
      deep: { deeper: { client_secret: "[redacted]" } },
    });
    expect(request('{"pass\\u0077ord":"hunter2"}').text).toBe('{"pass\\u0077ord":"[redacted]"}');
  });

  test("strings found from their first quote: a value holding quotes and colons hides no field", () => {
    // A scan that looked for `"name":` anywhere would pair the ":" string with the next key and miss the password.
    expect(request('{"a":[":"],"password":"x"}').text).toBe('{"a":[":"],"password":"[redacted]"}');
    expect(request('{"note":"say \\"password\\": \\"no\\"","token":"t"}').text).toBe(
      '{"note":"say \\"password\\": \\"no\\"","token":"[redacted]"}',
    );
  });

  test("an idempotency key, a key's id and its prefix are kept", () => {
    const sent = '{"idempotency_key":"k-1","key_id":"4f1c","key_prefix":"rg_test_AbCd"}';
    expect(answer(sent).text).toBe(sent);
  });

  test("a body that is not JSON: name=value pairs and the patterns", () => {
    expect(request(`user=ada&password=hunter2&note=${apiKey}`).text).toBe("user=ada&password=[redacted]&note=[redacted]");
  });
});

describe("destinations", () => {
  test("masked in a request body as answers mask them, every alias and each order of a batch", () => {
    const sent = JSON.stringify({
      phone_number: "08031234567",
      orders: [{ destination: "08039876543" }, { receiver_phone_number: "+2348031112222" }],
      meter_number: "45012345678",
      smartcard_number: "7012345678",
      account_number: "1234567890123",
    });
    expect(JSON.parse(request(sent).text)).toEqual({
      phone_number: "0803****567",
      orders: [{ destination: "0803****543" }, { receiver_phone_number: "+234*******222" }],
      meter_number: "4501****678",
      smartcard_number: "7012***678",
      account_number: "1234******123",
    });
  });

  test("not touched in an answer (answers mask their own)", () => {
    const sent = '{"data":{"destination":"0803****567"}}';
    expect(answer(sent).text).toBe(sent);
  });

  test("in a query: destination-named parameters, a search that is a number; a reference search is kept", () => {
    expect(redactQuery("destination=08031234567&search=08031234567&limit=5", [])).toBe(
      "destination=0803****567&search=0803****567&limit=5",
    );
    expect(redactQuery("search=txn_4kq9Zr2mXc81LwPb7sTfYhQe", [])).toBe("search=txn_4kq9Zr2mXc81LwPb7sTfYhQe");
  });
});

describe("queries", () => {
  test("a parameter named for a secret, a credential in any parameter (encoded or not)", () => {
    expect(redactQuery("token=abc&limit=2", [])).toBe("token=[redacted]&limit=2");
    expect(redactQuery(`client_reference=${operatorToken}`, [])).toBe("client_reference=[redacted]");
    expect(redactQuery(`note=${encodeURIComponent(webhookSecret)}`, [])).toBe("note=[redacted]");
  });
});

describe("the limit", () => {
  test("cut on a UTF-8 boundary and marked; under the limit, whole and unmarked", () => {
    const body = JSON.stringify({ note: "€".repeat(100) });
    const cut = request(body, 64);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(64);
    expect(Buffer.byteLength(cut.text)).toBeGreaterThan(61);
    expect(body.startsWith(cut.text)).toBe(true);
    expect(request(body, 1024)).toEqual({ text: body, truncated: false });
    expect(cutUtf8("aé", 2)).toBe("a");
    expect(cutUtf8("a😀b", 4)).toBe("a");
  });

  test("a secret across the limit is replaced before the cut, never stored in part", () => {
    const body = `${"x".repeat(90)} ${apiKey} and more`;
    const cut = request(body, 100);
    expect(cut.text).toBe(`${"x".repeat(90)} [redacted`);
    expect(cut.text).not.toContain(apiKey.slice(0, 12));
    const field = `{"filler":"${"y".repeat(80)}","password":"${"p".repeat(5000)}"}`;
    expect(request(field, 100).text).not.toContain("ppp");
  });

  test("a long body past the limit and its margin: read only that far, still redacted and cut", () => {
    const body = JSON.stringify({ password: "hunter2", filler: "z".repeat(100_000) });
    const cut = request(body, 1000);
    expect(cut.truncated).toBe(true);
    expect(cut.text.startsWith('{"password":"[redacted]","filler":"zzz')).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBe(1000);
  });
});

describe("a record as stored", () => {
  const answered: AnsweredRequest = {
    arrivedAt: 1_000_000,
    requestId: "req_1",
    accountId: undefined,
    mode: undefined,
    keyId: undefined,
    keyPrefix: undefined,
    operator: undefined,
    method: "POST",
    route: "/api/v1/vend",
    url: "http://127.0.0.1:8080/api/v1/vend?dry=1&token=abc",
    status: 402,
    errorCode: undefined,
    idempotencyKey: "k-1",
    idempotentReplayed: true,
    durationMs: 12.34567,
    clientIp: "127.0.0.1",
    userAgent: `agent/${"u".repeat(300)}`,
    requestBody: '{"phone_number":"08031234567"}',
    responseBody: '{"success":false,"code":"WALLET_INSUFFICIENT_FUNDS","message":"no","data":null}',
  };

  test("path and query split from the URL, the code of a stored error answer read from it, the agent cut", () => {
    const row = storedRecord(answered, 3, 1_000_250, 16_384, []);
    expect(row).toMatchObject({
      ord: 3,
      age_ms: 250,
      path: "/api/v1/vend",
      query: "dry=1&token=[redacted]",
      error_code: "WALLET_INSUFFICIENT_FUNDS",
      idempotency_key: "k-1",
      idempotent_replayed: true,
      duration_ms: 12.346,
      request_body: '{"phone_number":"0803****567"}',
      request_body_truncated: false,
    });
    expect(row.user_agent).toHaveLength(256);
  });

  test("a request body PostgreSQL would refuse is made storable: a NUL, half a surrogate pair", () => {
    const row = storedRecord({ ...answered, requestBody: '{"note":"a\u0000b\ud800c"}' }, 0, 1_000_000, 16_384, []);
    expect(row.request_body).toBe('{"note":"a\uFFFDb\uFFFDc"}');
  });

  test("no query: null; REQUEST_LOGS_BODY_BYTES=0: no bodies, marked cut", () => {
    const row = storedRecord({ ...answered, url: "http://h/api/v1/wallet" }, 0, 1_000_000, 0, []);
    expect(row).toMatchObject({ path: "/api/v1/wallet", query: null, request_body: null, request_body_truncated: true });
  });
});

test("the secrets the configuration holds: admin token, each provider's keys, tokens and signing secrets", () => {
  const config = loadConfig({
    ADMIN_TOKEN: "admin-token-0123456789",
    VTU_BASE_URL: "https://vtu.example",
    VTU_API_KEY: "vtu-api-key-123",
    VTU_SECRET_KEY: "vtu-secret-key-456",
    VTU_CALLBACK_TOKEN: "vtu-callback-token-789",
    VTU_CALLBACK_SECRET: "vtu-callback-secret-012",
  });
  const secrets = configuredSecrets(config);
  for (const secret of [
    "admin-token-0123456789",
    "vtu-api-key-123",
    "vtu-secret-key-456",
    "vtu-callback-token-789",
    "vtu-callback-secret-012",
    config.providers.sandbox?.callbackToken ?? "",
    config.providers.sandbox?.callbackSecret ?? "",
  ])
    expect(secrets).toContain(secret);
  expect(secrets).not.toContain("https://vtu.example");
});
