import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { Link, pagePath } from '../router.jsx';
import { when } from '../time.js';
import { adminPage } from './adminPage.jsx';
import { DrainControl } from './DrainControl.jsx';
import { NodeState } from './NodeState.jsx';
import { Updated } from './Updated.jsx';
import { memoryText, sandboxesText, slotsText, vcpusText } from './nodeText.js';
import { mibText } from './sizes.js';
import { REFRESH_MS, usePolled } from '../usePolled.js';
import './nodes.css';

// One node (GET /v1/nodes/{id}, admin), read again every few seconds (a
// draining node turns drained by itself), with Drain or Undrain. An
// unknown one shows the API's 404.
export const Node = adminPage(function NodePage({ id, onKeyRefused }) {
  const path = '/v1/nodes/' + encodeURIComponent(id);
  const { data: node, error, updatedAt, show } = usePolled(
    () => call('GET', path), REFRESH_MS, [id], onKeyRefused);
  return (
    <section aria-labelledby="node-title">
      <p>
        <Link href={pagePath('nodes')}>← Nodes</Link>
      </p>
      <div class="bar">
        <h2 id="node-title">
          Node <code>{id}</code>
        </h2>
        <Updated at={updatedAt} />
      </div>
      <ErrorLine error={error} />
      {node === null ? (
        !error && <p>Loading…</p>
      ) : (
        <>
          <dl class="facts">
            <dt>State</dt>
            <dd class="state">
              <NodeState node={node} />
            </dd>
            <dt>State changed</dt>
            <dd>
              {node.state_changed_at
                ? `${when(node.state_changed_at)} by ${node.state_changed_by}`
                : 'never'}
            </dd>
            <dt>Last heartbeat</dt>
            <dd>{when(node.last_heartbeat_at)}</dd>
            <dt>vCPUs used</dt>
            <dd>{vcpusText(node)}</dd>
            <dt>Memory used</dt>
            <dd>
              {memoryText(node)} ({mibText(node.capacity.free_memory_mb)} free on the machine)
            </dd>
            <dt>Sandboxes</dt>
            <dd>{sandboxesText(node)}</dd>
            <dt>Slots used</dt>
            <dd>{slotsText(node)}</dd>
            <dt>Templates ready</dt>
            <dd>{node.templates.length ? node.templates.join(', ') : 'none'}</dd>
            <dt>Accelerator</dt>
            <dd>{node.accel}</dd>
            <dt>vmhost</dt>
            <dd>
              <code>{node.vmhost_addr}</code>, started {when(node.started_at)}
            </dd>
          </dl>
          <DrainControl node={node} onAnswer={show} onKeyRefused={onKeyRefused} />
        </>
      )}
    </section>
  );
});
