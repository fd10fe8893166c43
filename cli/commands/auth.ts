import { Command } from "commander";
import { apiErrorOf, unwrap, type VendClient } from "../client.ts";
import { configPath, describeSource, type ResolvedConfig } from "../config.ts";
import { actionCommand, withExample } from "../context.ts";
import { maskSecret } from "../debug.ts";
import { ApiError, UsageError } from "../errors.ts";
import type { Column } from "../output.ts";

interface CredentialStatus {
  value: string;
  source: string;
  valid: boolean;
  error: string | null;
}

/** The key's budget as the API's RateLimit headers state it; null when the server sends none (limit off). */
interface RateLimitSeen {
  limit: number;
  remaining: number;
  reset_seconds: number;
}

interface AuthStatus {
  profile: string;
  config_file: string;
  base_url: string;
  base_url_source: string;
  api_key:
    | (CredentialStatus & {
        mode: string | null;
        /** The key's account and id, its expiry and allow-list, from `GET /api/v1/keys` (null when refused). */
        account_id: string | null;
        key_id: string | null;
        expires_at: string | null;
        allowed_ips: string[] | null;
        rate_limit: RateLimitSeen | null;
      })
    | null;
  admin_token: (CredentialStatus & { operator: string | null; role: string | null }) | null;
}

interface Checked<T> {
  data?: T;
  refused?: ApiError;
  response?: Response;
}

/** A 401 is an answer about the credential, reported in the status; any other error is the command's error. */
async function checkCredential<T>(pending: Promise<{ data?: { data: T }; error?: unknown; response: Response }>) {
  const { data, error, response } = await pending;
  if (response.ok && data) return { data: data.data, response } satisfies Checked<T>;
  const refused = apiErrorOf(error, response);
  if (response.status === 401) return { refused, response } satisfies Checked<T>;
  throw refused;
}

function credential(config: ResolvedConfig, setting: "apiKey" | "adminToken", checked: Checked<unknown>, value: string) {
  return {
    value: maskSecret(value),
    source: describeSource(config.sources[setting], setting, config.profile),
    valid: !checked.refused,
    error: checked.refused ? `${checked.refused.code}: ${checked.refused.message}` : null,
  };
}

async function statusOf(config: ResolvedConfig, api: () => VendClient, admin: () => VendClient, anonymous: VendClient) {
  await unwrap(anonymous.GET("/healthz"));
  const status: AuthStatus = {
    profile: config.profile,
    config_file: configPath(),
    base_url: config.baseUrl,
    base_url_source: describeSource(config.sources.baseUrl, "baseUrl", config.profile),
    api_key: null,
    admin_token: null,
  };
  if (config.apiKey) {
    const wallet = await checkCredential(api().GET("/api/v1/wallet"));
    // Best effort: the key's details are extra; a refusal here (e.g. 429 after the wallet check) leaves them null.
    const keys = wallet.data ? await api().GET("/api/v1/keys") : undefined;
    const current = keys?.data?.data.find((key) => key.current);
    status.api_key = {
      ...credential(config, "apiKey", wallet, config.apiKey),
      mode: wallet.data?.mode ?? null,
      account_id: current?.account_id ?? null,
      key_id: current?.id ?? null,
      expires_at: current?.expires_at ?? null,
      allowed_ips: current?.allowed_ips ?? null,
      rate_limit: wallet.data && wallet.response ? rateLimitOf(wallet.response) : null,
    };
  }
  if (config.adminToken) {
    const me = await checkCredential(admin().GET("/admin/v1/operators/me"));
    const base = credential(config, "adminToken", me, config.adminToken);
    status.admin_token = { ...base, operator: me.data?.name ?? null, role: me.data?.role ?? null };
  }
  return status;
}

function rateLimitOf(response: Response): RateLimitSeen | null {
  const [limit, remaining, reset] = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((name) =>
    Number.parseInt(response.headers.get(name) ?? "", 10),
  );
  if (limit === undefined || remaining === undefined || reset === undefined || [limit, remaining, reset].some(Number.isNaN))
    return null;
  return { limit, remaining, reset_seconds: reset };
}

const describeRateLimit = (seen: RateLimitSeen | null | undefined): string =>
  seen ? `; ${seen.limit} requests a minute, ${seen.remaining} left, the minute ends in ${seen.reset_seconds} s` : "";

const describeKey = (key: AuthStatus["api_key"]): string =>
  [
    `valid, ${key?.mode} mode`,
    key?.account_id ? `, account ${key.account_id}` : "",
    key?.expires_at ? `, expires ${key.expires_at}` : "",
    key?.allowed_ips ? `, only from ${key.allowed_ips.join(" ")}` : "",
    describeRateLimit(key?.rate_limit),
  ].join("");

const describe = (c: CredentialStatus | null, detail: string): string =>
  c ? `${c.value} from ${c.source}: ${c.valid ? detail : `REFUSED (${c.error})`}` : "not set";

const columns: Column<AuthStatus>[] = [
  { key: "profile", header: "Profile", get: (s) => `${s.profile} (${s.config_file})` },
  { key: "base_url", header: "Base URL", get: (s) => `${s.base_url} from ${s.base_url_source}: answering` },
  {
    key: "api_key",
    header: "API key",
    get: (s) => describe(s.api_key, describeKey(s.api_key)),
  },
  {
    key: "admin_token",
    header: "Admin token",
    get: (s) => describe(s.admin_token, `operator ${s.admin_token?.operator}, role ${s.admin_token?.role}`),
  },
];

const authStatusCommand = (): Command =>
  actionCommand(
    new Command("status").description(
      "Who am I: the profile, the base URL and where each value comes from; the API key's mode, account, expiry, " +
        "allow-list and rate limit (as the API's RateLimit headers state it; checking spends two requests) and the admin " +
        "token's operator and role, checked against the API. Exit 1 if the API refuses one, 2 if none is set, 3 if " +
        "the server cannot be reached.",
    ),
    ["vendctl auth status", "vendctl auth status --profile staging --json"],
    async (ctx) => {
      const { config, clients } = ctx;
      if (!config.apiKey && !config.adminToken) {
        throw new UsageError(
          `not logged in: no API key or admin token in flags, VENDCTL_* variables or profile "${config.profile}"; ` +
            "run `vendctl login`",
        );
      }
      const status = await statusOf(
        config,
        () => clients.api(),
        () => clients.admin(),
        clients.anonymous(),
      );
      await ctx.printer.record(status, columns);
      const refused = [
        status.api_key?.valid === false ? "API key" : "",
        status.admin_token?.valid === false ? "admin token" : "",
      ].filter(Boolean);
      if (refused.length > 0) {
        throw new ApiError(
          "UNAUTHENTICATED",
          `the API refused the ${refused.join(" and the ")}; run \`vendctl login\` with a working one`,
          401,
        );
      }
    },
  );

/** `vendctl auth` alone does what its description says: the check of `auth status`. */
export const authCommand = (): Command =>
  withExample(
    new Command("auth")
      .description("Check the configured credentials: `vendctl auth` alone is `vendctl auth status`")
      .addCommand(authStatusCommand(), { isDefault: true }),
    "vendctl auth",
    "vendctl auth status --profile staging --json",
  );
