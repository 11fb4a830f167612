import { bytesText } from './sizes.js';
import { WarmPoolForm } from './WarmPoolForm.jsx';

// What is stored for a pool: the API's null is "not set" (each node's own
// --warm-pool and --warm-pool-max apply).
const stored = (value, unset) => (value === null ? unset : value);

// One template's warm pool (GET /v1/templates/{name}/warm-pool): its floor
// and ceiling, editable, and what each live node's last heartbeat said of
// it.
export function WarmPool({ pool, onSaved, onKeyRefused }) {
  const idPrefix = 'pool-' + pool.template.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <section class="pool" aria-labelledby={idPrefix}>
      <h3 id={idPrefix}>
        <code>{pool.template}</code>
      </h3>
      <p class="stored">
        Set: min {stored(pool.target, 'not set')}, max {stored(pool.max, "each node's own")}
      </p>
      <WarmPoolForm pool={pool} idPrefix={idPrefix} onSaved={onSaved}
                    onKeyRefused={onKeyRefused} />
      {pool.nodes.length === 0 ? (
        <p>No live node reports this pool.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Node</th>
              <th>Fills to</th>
              <th>Ready</th>
              <th>Min</th>
              <th>Max</th>
              <th>Memory</th>
              <th>Demand</th>
            </tr>
          </thead>
          <tbody>
            {pool.nodes.map((n) => (
              <tr key={n.node} data-node={n.node}>
                <td data-label="Node">
                  <code>{n.node}</code>
                </td>
                <td data-label="Fills to">{n.target}</td>
                <td data-label="Ready" class="ready">
                  {n.ready}
                </td>
                <td data-label="Min">{n.min}</td>
                <td data-label="Max">{n.max}</td>
                <td data-label="Memory">{bytesText(n.memory_bytes)}</td>
                <td data-label="Demand">{n.demand_per_s.toFixed(1)} creates/s</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
