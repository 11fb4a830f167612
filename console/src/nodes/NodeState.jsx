// A node's drain state (active, draining, drained) and, apart from it,
// whether its heartbeat still comes (docs/api.md "Nodes").
export function NodeState({ node }) {
  return (
    <span class={'node-state ' + node.state + (node.live ? '' : ' silent')}>
      {node.state}
      {!node.live && ' · not live'}
    </span>
  );
}
