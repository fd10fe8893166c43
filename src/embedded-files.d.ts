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

/** PGlite's WebAssembly, file system bundle and extension bundle, imported as files (src/db/embedded-artifacts.ts). */
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*/pglite/dist/pglite.data" {
  const path: string;
  export default path;
}
declare module "*.tar.gz" {
  const path: string;
  export default path;
}
