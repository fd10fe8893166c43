import { expect, test } from "bun:test";
import type { Handlers, OperationHandler } from "../../src/http/operations.ts";

/**
 * The handler map is checked by the type checker (`tsc --noEmit` in .ci/run): a map missing an operation
 * of openapi.yaml does not compile. If `Handlers` ever allowed a missing key again, the `@ts-expect-error`
 * below would be unused and type checking would fail.
 */
test("a handler map without an operation of the contract fails type checking", () => {
  const health: OperationHandler<"getHealth"> = async () => ({ status: 200, data: { status: "ok" } });
  const only = { getHealth: health };
  // @ts-expect-error every other operation is missing
  const incomplete: Handlers = only;
  expect(Object.keys(incomplete)).toEqual(["getHealth"]);
});
