// Samples for the metrics page, one every SAMPLE_MS while it is open and
// the last windowMs of them kept, in this tab's memory only (a reload
// starts afresh): the gateway's create numbers (createStats.js) and a
// count of running sandboxes, which its /metrics does not have.
import { useEffect, useState } from 'preact/hooks';
import { call, send } from '../api.js';
import { usePolled } from '../usePolled.js';
import { createNumbers } from './createStats.js';
import { parsePrometheus } from './prometheus.js';

export const SAMPLE_MS = 5000;

// GET /metrics takes no key; send() adds it anyway, and the gateway
// ignores it there.
async function scrape() {
  const res = await send('/metrics');
  return parsePrometheus(await res.text());
}

// Running sandboxes: of every project, the nodes' counts (GET /v1/nodes),
// for the admin key; of the key's project (GET /v1/sandboxes) for another.
async function countRunning(admin) {
  if (admin) {
    const { nodes } = await call('GET', '/v1/nodes');
    return nodes.reduce((sum, n) => sum + (n.sandboxes.running || 0), 0);
  }
  const { sandboxes } = await call('GET', '/v1/sandboxes');
  return sandboxes.filter((s) => s.state === 'running').length;
}

async function sample(admin) {
  const t = Date.now();
  const [metrics, running] = await Promise.all([scrape(), countRunning(admin)]);
  return { t, ...createNumbers(metrics), running };
}

// { samples (oldest first), error }: a failed sample is left out and its
// error shown until one succeeds again.
export function useSamples(windowMs, admin, onKeyRefused) {
  const { data, error } = usePolled(() => sample(admin), SAMPLE_MS, [admin], onKeyRefused);
  const [samples, setSamples] = useState([]);
  useEffect(() => {
    if (data) setSamples((kept) => [...kept.filter((s) => data.t - s.t <= windowMs), data]);
  }, [data]);
  return { samples, error };
}
