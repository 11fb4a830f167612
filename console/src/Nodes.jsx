import { ErrorLine } from './ErrorLine.jsx';
import { Link, pagePath } from './router.jsx';
import { age, when } from './time.js';
import { adminPage } from './nodes/adminPage.jsx';
import { NodeState } from './nodes/NodeState.jsx';
import { Updated } from './nodes/Updated.jsx';
import { memoryText, sandboxesText, slotsText, vcpusText } from './nodes/nodeText.js';
import { useNow } from './useNow.js';
import { REFRESH_MS, usePolled } from './usePolled.js';
import { poolsOn, readWarmPools } from './nodes/warmPools.js';
import { Listing } from './Listing.jsx';
import './nodes/nodes.css';

// Every node the scheduler heard from (GET /v1/nodes, admin), read again
// every few seconds, with the warm pools each takes part in.
export const Nodes = adminPage(function NodesTable({ onKeyRefused }) {
  const { data, error, updatedAt } = usePolled(readWarmPools, REFRESH_MS, [], onKeyRefused);
  const now = useNow(1000);
  return (
    <section aria-labelledby="nodes-title">
      <div class="bar">
        <h2 id="nodes-title">Nodes</h2>
        <Updated at={updatedAt} />
      </div>
      <ErrorLine error={error} />
      <Listing items={data && data.nodes} error={error}
               empty="No node has sent a heartbeat yet."
               columns={['Node', 'State', 'vCPUs used', 'Memory used', 'Sandboxes', 'Slots used',
                         'Warm pools', 'Last heartbeat']} class="nodes"
               row={(n) => (
          <tr key={n.id} data-id={n.id}>
            <td data-label="Node">
              <Link href={pagePath('nodes', n.id)}>
                <code>{n.id}</code>
              </Link>
            </td>
            <td data-label="State" class="state">
              <NodeState node={n} />
            </td>
            <td data-label="vCPUs used">{vcpusText(n)}</td>
            <td data-label="Memory used">{memoryText(n)}</td>
            <td data-label="Sandboxes">{sandboxesText(n)}</td>
            <td data-label="Slots used">{slotsText(n)}</td>
            <td data-label="Warm pools">
              <PoolsOn pools={poolsOn(data.pools, n.id)} />
            </td>
            <td data-label="Last heartbeat" title={when(n.last_heartbeat_at)}>
              {n.last_heartbeat_at ? age(n.last_heartbeat_at, now) + ' ago' : '—'}
            </td>
          </tr>
        )} />
    </section>
  );
});

// "default: 1 ready of 2" per pool, linking to where they are set.
function PoolsOn({ pools }) {
  if (pools.length === 0) return 'none';
  return (
    <Link href={pagePath('warm-pools')}>
      {pools.map((p) => `${p.template}: ${p.ready} ready of ${p.target}`).join('; ')}
    </Link>
  );
}
