import { useState } from 'preact/hooks';
import { ErrorLine } from './ErrorLine.jsx';
import { LineChart } from './metrics/LineChart.jsx';
import { createsOver, trailing } from './metrics/createStats.js';
import { SAMPLE_MS, useSamples } from './metrics/useSamples.js';
import './metrics/metrics.css';

const WINDOWS_MIN = [5, 15, 30, 60];
// Each point looks back this far: creates per minute are a minute's.
const SPAN_MS = 60000;

// Counts are whole but an axis may be halfway. Times: to 0.1 under 10 ms,
// in seconds from one (to 0.1).
const tenths = (v) => Math.round(v * 10) / 10;
const count = (v) => String(tenths(v));
function ms(v) {
  if (Math.round(v) >= 1000) return tenths(v / 1000) + ' s';
  return (v < 10 ? tenths(v) : Math.round(v)) + ' ms';
}
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// "the last minute", or less while the page has not been open that long.
function lastText(spanMs) {
  if (spanMs >= SPAN_MS - SAMPLE_MS / 2) return 'the last minute';
  return `the last ${Math.round(spanMs / 1000)} s`;
}

function createsText(p) {
  if (!p || p.created === null) return 'waiting for a second sample…';
  return `${plural(p.created, 'create')} in ${lastText(p.ms)}`;
}

function latencyText(p) {
  if (!p || p.answered === null) return 'waiting for a second sample…';
  if (p.answered === 0) return `no create answered in ${lastText(p.ms)}`;
  const answered = `${plural(p.answered, 'create')} answered in ${lastText(p.ms)}`;
  return `median ${ms(p.median)}, p90 ${ms(p.p90)} (${answered})`;
}

const WHAT = {
  creates: 'Sandboxes created (POST /v1/sandboxes answered 2xx) in the minute up to each sample.',
  latency:
    'Time to answer POST /v1/sandboxes, every answer (refusals too), in the minute up to each ' +
    "sample: median and 90th percentile, estimated from the histogram's buckets (5, 10, 25 … " +
    '60000 ms).',
  running: {
    admin: 'Sandboxes running in every project: the sum of the nodes’ counts (GET /v1/nodes).',
    project: 'Sandboxes running in this key’s project (GET /v1/sandboxes).',
  },
};

// Charts of creates per minute, create latency and running sandboxes,
// sampled while the page is open. Any key: GET /metrics takes none, and
// the running sandboxes are counted with what the key may read; until
// whoami has said which key this is (admin null), nothing is asked.
export function Metrics({ admin, onKeyRefused }) {
  if (admin === null) return <p>Checking the key…</p>;
  return <Charts admin={admin} onKeyRefused={onKeyRefused} />;
}

function Charts({ admin, onKeyRefused }) {
  const [windowMin, setWindowMin] = useState(15);
  const windowMs = windowMin * 60000;
  const { samples, error } = useSamples(windowMs, admin, onKeyRefused);
  const points = samples.map((s, i) => ({
    t: s.t,
    running: s.running,
    ...createsOver(trailing(samples, i, SPAN_MS)),
  }));
  const latest = points[points.length - 1];
  // The axes end at the newest sample, so a line never stops short of "now".
  const chart = { windowMs, now: latest ? latest.t : Date.now() };
  const line = (name, key) => ({
    name,
    className: name,
    points: points.map((p) => ({ t: p.t, v: p[key] })),
  });

  return (
    <section aria-labelledby="metrics-title">
      <div class="bar">
        <h2 id="metrics-title">Metrics</h2>
        <label class="window">
          Window{' '}
          <select value={windowMin} onChange={(e) => setWindowMin(Number(e.currentTarget.value))}>
            {WINDOWS_MIN.map((m) => (
              <option key={m} value={m}>
                {m} minutes
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="hint">
        Creates and their latency are this gateway's (the one serving this page: behind several,
        its share only) for all projects, from its <code>GET /metrics</code>, counted since it last
        started. A sample every {SAMPLE_MS / 1000} s while this page is open; the window is kept in
        this tab only.
      </p>
      <ErrorLine error={error} />
      <div class="charts">
        <LineChart id="chart-creates" title="Creates per minute" what={WHAT.creates} {...chart}
                   series={[line('creates', 'created')]} format={count}
                   current={createsText(latest)} />
        <LineChart id="chart-latency" title="Create latency" what={WHAT.latency} {...chart}
                   series={[line('median', 'median'), line('p90', 'p90')]} format={ms}
                   current={latencyText(latest)} />
        <LineChart id="chart-live" title="Live sandboxes" {...chart}
                   what={admin ? WHAT.running.admin : WHAT.running.project}
                   series={[line('running', 'running')]} format={count}
                   current={latest ? `${latest.running} running` : 'waiting for a sample…'} />
      </div>
    </section>
  );
}
