import { Command, Option } from "commander";
import { type OperatorRole, operatorRoles } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap } from "../client.ts";
import { confirmDestructive, yesOption } from "../confirm-destructive.ts";
import { actionCommand, commandGroup, recordCommand, withExample } from "../context.ts";
import type { Column } from "../output.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../paging.ts";
import { fields } from "../views.ts";

type Operator = components["schemas"]["Operator"];
type OperatorCreated = components["schemas"]["OperatorCreated"];

const operatorColumns: Column<Operator>[] = fields("id", "name", "role", "prefix", "created_by", "created_at", "revoked_at");
const operatorCreatedColumns: Column<OperatorCreated>[] = [
  ...operatorColumns.map((column) => ({ ...column, get: (row: OperatorCreated) => row.operator[column.key as keyof Operator] })),
  { key: "token" },
];

const operatorsListCommand = (): Command =>
  pagedListCommand(
    withExample(new Command("list").description("Operators, newest first, revoked ones too"), "vendctl operators list --all"),
    resumable(operatorColumns),
    (ctx, _flags: PagingFlags) => {
      const client = ctx.clients.admin();
      return queryPages({}, (query) => client.GET("/admin/v1/operators", { params: { query } }));
    },
  );

const operatorsCreateCommand = (): Command =>
  actionCommand(
    new Command("create")
      .description("Create an operator with its own token (admin role; the token is shown only now)")
      .requiredOption("--name <name>", "the operator's name, as the audit shows it")
      .addOption(
        new Option("--role <role>", "viewer reads; operator also changes money and orders; admin also manages operators")
          .choices(operatorRoles)
          .makeOptionMandatory(),
      ),
    ["vendctl operators create --name ada --role operator"],
    async (ctx, flags: { name: string; role: OperatorRole }) => {
      const created = await unwrap(
        ctx.clients.admin().POST("/admin/v1/operators", { body: { name: flags.name, role: flags.role } }),
      );
      await ctx.printer.record(created, operatorCreatedColumns);
    },
  );

const operatorsRevokeCommand = (): Command =>
  actionCommand(
    new Command("revoke")
      .description(
        "Revoke an operator's token; it stops working at once (admin role). Asks to confirm on a terminal; --yes without one",
      )
      .argument("<operator-id>", "operator id")
      .addOption(yesOption()),
    ["vendctl operators revoke 5c1d2e3f-0000-4000-8000-000000000001 --yes"],
    async (ctx, operatorId: string, flags: { yes?: boolean }) => {
      await confirmDestructive(
        ctx,
        flags.yes,
        `Revoke operator ${operatorId}`,
        "Every request made with its token fails from now on",
      );
      const path = { operator_id: operatorId };
      const revoked = await unwrap(ctx.clients.admin().DELETE("/admin/v1/operators/{operator_id}", { params: { path } }));
      await ctx.printer.record(revoked, operatorColumns);
    },
  );

const operatorsWhoamiCommand = (): Command =>
  recordCommand(
    new Command("whoami").description("The operator the configured admin token belongs to, and its role"),
    ["vendctl operators whoami"],
    operatorColumns,
    (ctx) => ctx.clients.admin().GET("/admin/v1/operators/me"),
  );

export const operatorsCommand = (): Command =>
  commandGroup(
    new Command("operators").description("People who run the service: their tokens and roles (admin token)"),
    [operatorsListCommand(), operatorsCreateCommand(), operatorsRevokeCommand(), operatorsWhoamiCommand()],
    "vendctl operators create --name ada --role viewer",
  );
