// The package exports no path to its browser bundle, hence the path through node_modules.
import scalarBundle from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

/**
 * The Scalar renderer from the installed package: one self-contained file, served at `/docs/scalar.js`.
 * Imported as a file, so `bun build --compile` embeds it in dist/vend.
 */
export const scalarBundlePath: string = scalarBundle;

/**
 * Scalar settings that keep the page inside this service: no fonts from fonts.scalar.com, no telemetry, and
 * none of the features that call scalar.com (the "Ask AI" agent, "Generate MCP", the developer toolbar with
 * "Share" and "Deploy").
 */
const offlineSettings = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
};

export interface DocsPage {
  /** The document the page renders (`/openapi.yaml?view=client`). */
  specUrl: string;
  title: string;
  /** The server the reference shows; the page's own origin when unset. */
  publicBaseUrl: string | undefined;
}

/**
 * A reference page (`/docs`, `/docs/admin`). The reference's server is `publicBaseUrl` when set, else the origin
 * the browser loaded the page from (so it is right behind a proxy too), never the `servers` entry of openapi.yaml.
 */
export function renderDocsPage({ specUrl, title, publicBaseUrl }: DocsPage): string {
  // Escaping "<" keeps the JSON from closing the script element whatever the URL holds.
  const settings = JSON.stringify({ url: specUrl, ...offlineSettings }).replaceAll("<", "\\u003c");
  const server = JSON.stringify(publicBaseUrl ?? null).replaceAll("<", "\\u003c");
  const escapedTitle = title.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapedTitle}</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/scalar.js"></script>
    <script>
      const server = ${server} ?? window.location.origin;
      Scalar.createApiReference("#app", { ...${settings}, servers: [{ url: server, description: "This server" }] });
    </script>
  </body>
</html>
`;
}
