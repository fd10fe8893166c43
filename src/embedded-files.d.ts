/** Files the code imports `with { type: "file" }`: their path, inside dist/vend once built (src/db/migration-files.ts). */
declare module "*.sql" {
  const path: string;
  export default path;
}

/** The Scalar renderer's browser bundle, imported as a file (src/system/docs-page.ts). */
declare module "*/api-reference/dist/browser/standalone.js" {
  const path: string;
  export default path;
}
