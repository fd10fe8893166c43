import { type Command, Option } from "commander";
import { type ServiceCode, serviceCodes } from "../generated/constants.ts";

/** --network and --service: what the catalogue and pricing lists are narrowed by. */
export interface CatalogueFilters {
  network?: string;
  service?: ServiceCode;
}

export function addCatalogueFilters(command: Command, networkHelp: string, serviceHelp: string): Command {
  return command
    .option("--network <code>", networkHelp)
    .addOption(new Option("--service <service>", serviceHelp).choices(serviceCodes));
}
