import { version } from "../../../package.json";

/**
 * What a release is, for `vend --version` and `vendctl --version`: the package version, the commit and the
 * build date. `npm run build` fixes the commit and date into the executables (scripts/build.ts defines
 * these variables at build time); run from the source tree they say so.
 */
export function versionLine(program: string): string {
  const commit = process.env.VEND_BUILD_COMMIT;
  const built = process.env.VEND_BUILD_DATE;
  return commit && built ? `${program} ${version} (commit ${commit}, built ${built})` : `${program} ${version} (from source)`;
}
