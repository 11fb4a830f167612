import { ErrorLine } from './ErrorLine.jsx';
import { adminPage } from './nodes/adminPage.jsx';
import { Updated } from './nodes/Updated.jsx';
import { REFRESH_MS, usePolled } from './usePolled.js';
import { WarmPool } from './nodes/WarmPool.jsx';
import { readWarmPools } from './nodes/warmPools.js';
import './nodes/nodes.css';

// The warm pools of `default` and of every template version a node has
// (admin), read again every few seconds so that the ready VMs are
// followed as they fill; each pool's min and max are set here.
export const WarmPools = adminPage(function WarmPoolsPage({ onKeyRefused }) {
  const { data, error, updatedAt, show } = usePolled(readWarmPools, REFRESH_MS, [], onKeyRefused);
  const saved = (pool) =>
    show({ ...data, pools: data.pools.map((p) => (p.template === pool.template ? pool : p)) });
  return (
    <section aria-labelledby="pools-title">
      <div class="bar">
        <h2 id="pools-title">Warm pools</h2>
        <Updated at={updatedAt} />
      </div>
      <p class="hint">
        Every live node keeps at least <em>min</em> restored, paused VMs of a template ready (a
        create takes one in a few ms) and grows its pool up to <em>max</em> following its recent
        creates. <em>Fills to</em> is where a node's pool is headed now.
      </p>
      <ErrorLine error={error} />
      {data === null
        ? !error && <p>Loading…</p>
        : data.pools.map((p) => (
            <WarmPool key={p.template} pool={p} onSaved={saved} onKeyRefused={onKeyRefused} />
          ))}
    </section>
  );
});
