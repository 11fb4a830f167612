// Every warm pool the admin can see, with the nodes: GET /v1/nodes, then
// GET /v1/templates/{name}/warm-pool for `default` and each template
// version a node reports ready (named as nodes name them,
// <project>.<name>:<version>, which the route takes). GET /v1/templates
// would list only the admin key's own project's templates.
import { call } from '../api.js';

export async function readWarmPools() {
  const { nodes } = await call('GET', '/v1/nodes');
  const names = ['default', ...new Set(nodes.flatMap((n) => n.templates).sort())];
  const pools = await Promise.all(
    names.map((name) => call('GET', `/v1/templates/${encodeURIComponent(name)}/warm-pool`)),
  );
  return { nodes, pools };
}

// The pools a node takes part in: any with a floor, a target or VMs
// ready there, as { template, ...the node's numbers }.
export function poolsOn(pools, nodeId) {
  return pools
    .map((p) => ({ template: p.template, ...p.nodes.find((n) => n.node === nodeId) }))
    .filter((p) => p.min > 0 || p.target > 0 || p.ready > 0);
}
