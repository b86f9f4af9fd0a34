// Uses the types openapi-typescript generates from the served OpenAPI
// document, so that `tsc --strict` checks they are complete and sound.
import type { components, paths } from "./api";

type Run = components["schemas"]["Run"];
type Step = components["schemas"]["DocumentStep"];
type StartRun = paths["/runs"]["post"]["requestBody"]["content"]["application/json"];

export const start: StartRun = { definition: "orders", input: { amount: 5 } };
export const step: Step = { ref: "charge", type: "task", with: { handler: "payments.charge" } };
export function finished(r: Run): boolean {
  return r.status === "succeeded" || r.status === "failed";
}
