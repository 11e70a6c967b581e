// A client of the management API typed by what openapi-typescript makes of
// the served OpenAPI document (api.d.ts, generated beside this file by the
// test): it signs in, creates a group and a deployment, scores a row,
// patches the deployment with If-Match and runs a job. A document whose
// types do not fit these calls fails the type check; a server whose answers
// do not fit them fails the run.
import type { components, paths } from "./api";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

type Schemas = components["schemas"];
type Body<Op, Type extends string = "application/json"> = Op extends { requestBody: { content: { [T in Type]: infer B } } } ? B : never;
type OK<Op, Status extends number> = Op extends {
  responses: { [S in Status]: { content: { "application/json": infer R } } };
}
  ? R
  : never;

const base = process.env.SCOREHUB_URL ?? "http://127.0.0.1:8080";
const user = process.env.SCOREHUB_USER ?? "admin";
const password = process.env.SCOREHUB_PASSWORD ?? "";

// call sends one request and returns the JSON answer, failing on any status
// but want.
async function call<R>(method: string, path: string, want: number, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<R> {
  const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers["Content-Type"] ??= "application/json";
  const res = await fetch(base + path, { method, headers, body: init.body === undefined ? null : JSON.stringify(init.body) });
  const text = await res.text();
  if (res.status !== want) throw new Error(`${method} ${path}: ${res.status}, want ${want}: ${text}`);
  return JSON.parse(text) as R;
}

async function main(): Promise<void> {
  const basic = "Basic " + btoa(`${user}:${password}`);
  const signedIn = await call<OK<paths["/api/rest/tokenservice"]["get"], 200>>("GET", "/api/rest/tokenservice", 200, { headers: { Authorization: basic } });
  const token = signedIn.idToken;

  const groupBody: Body<paths["/api/v1/webapigroups"]["post"]> = { name: "typed", description: "Made by the typed client" };
  const group: Schemas["Group"] = await call("POST", "/api/v1/webapigroups", 201, { token, body: groupBody });

  const deploymentBody: Schemas["DeploymentCreate"] = {
    group: group.name,
    path: "flowers",
    endpoints: [{ alias: "species", process: "iris" }],
  };
  const deployment: Schemas["Deployment"] = await call("POST", "/api/v1/deployments", 201, { token, body: deploymentBody });

  const row: Schemas["Row"] = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2, note: null };
  const scoreBody: Schemas["ScoringRequest"] = { data: [row] };
  const scored: Schemas["ScoringResponse"] = await call("POST", `/webapi/${group.name}/api/v1/services/${deployment.path}/species`, 200, { token, body: scoreBody });
  const first: Schemas["Value"] | undefined = scored.data[0]?.["sepal_length"];
  if (scored.data.length !== 1 || first !== 5.1) throw new Error(`scoring answered ${JSON.stringify(scored)}`);

  const patch: Body<paths["/api/v1/deployments/{group}/{path}"]["patch"], "application/merge-patch+json"> = { description: "Patched by the typed client" };
  const mergePatch = { "If-Match": `"${deployment.revision}"`, "Content-Type": "application/merge-patch+json" };
  const patched: Schemas["Deployment"] = await call("PATCH", `/api/v1/deployments/${group.name}/${deployment.path}`, 200, {
    token,
    body: patch,
    headers: mergePatch,
  });
  if (patched.revision !== deployment.revision + 1 || patched.description !== patch.description) {
    throw new Error(`PATCH answered ${JSON.stringify(patched)}`);
  }
  // The revision patched away no longer matches.
  const stale: Schemas["Error"] = await call("PATCH", `/api/v1/deployments/${group.name}/${deployment.path}`, 412, {
    token,
    body: patch,
    headers: mergePatch,
  });
  if (stale.error.type !== "precondition_failed") throw new Error(`the 412 is ${JSON.stringify(stale)}`);

  const jobBody: Schemas["JobCreate"] = { endpoint: { group: group.name, path: deployment.path, alias: "species" }, data: [row] };
  let job: Schemas["Job"] = await call("POST", "/executions/jobs", 201, { token, body: jobBody });
  const id: Schemas["JobId"] = job.id;
  for (let i = 0; job.state === "PENDING" || job.state === "RUNNING"; i++) {
    if (i === 500) throw new Error(`job ${id} still ${job.state}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
    job = await call("GET", `/executions/jobs/${id}`, 200, { token });
  }
  if (job.state !== "FINISHED" || job.error !== null || job.endpoint?.alias !== "species") {
    throw new Error(`job ended ${JSON.stringify(job)}`);
  }
  const result: OK<paths["/executions/jobs/{id}/result"]["get"], 200> = await call("GET", `/executions/jobs/${id}/result`, 200, { token });
  console.log(`scored ${scored.data.length} row, patched to revision ${patched.revision}, job ${job.state} with ${result.data.length} row`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
