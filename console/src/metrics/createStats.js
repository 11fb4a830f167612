// What the charts say about creates, from samples of the gateway's
// GET /metrics: its counter of answers by route and status class and its
// histogram of time to answer by route (docs/operations.md "Metrics").
import { increase, quantile } from './counters.js';

const CREATE_ROUTE = 'POST /v1/sandboxes';
const REQUESTS = 'airlock_gateway_http_requests_total';
const DURATION_BUCKET = 'airlock_gateway_http_request_duration_ms_bucket';

// A scrape's numbers for creates: sandboxes created (2xx answers) and the
// cumulative buckets of every create's time to answer (refusals too: the
// histogram has no status), [{ le, count }] by le. Nothing until the
// gateway's first create: 0 and [].
export function createNumbers(scrape) {
  const ofCreates = (s) => s.labels.route === CREATE_ROUTE;
  const created = scrape
    .filter((s) => s.name === REQUESTS && ofCreates(s) && s.labels.code === '2xx')
    .reduce((sum, s) => sum + s.value, 0);
  const buckets = scrape
    .filter((s) => s.name === DURATION_BUCKET && ofCreates(s))
    .map((s) => ({ le: Number(s.labels.le === '+Inf' ? Infinity : s.labels.le), count: s.value }))
    .sort((a, b) => a.le - b.le);
  return { created, buckets };
}

// Samples i looks back on: from the oldest at most spanMs before it, to it.
export function trailing(samples, i, spanMs) {
  let first = i;
  while (first > 0 && samples[i].t - samples[first - 1].t <= spanMs) first--;
  return samples.slice(first, i + 1);
}

// Over a span of samples (oldest first): how long it is, the sandboxes
// created, how many creates were answered and their median and 90th
// percentile time (ms; null without any). A span of one sample has seen
// nothing yet: null throughout.
export function createsOver(span) {
  if (span.length < 2) return { ms: 0, created: null, answered: null, median: null, p90: null };
  const latest = span[span.length - 1].buckets;
  const countAt = (buckets, le) => (buckets.find((b) => b.le === le) || { count: 0 }).count;
  const grown = latest.map(({ le }) => ({
    le,
    count: increase(span.map((s) => countAt(s.buckets, le))),
  }));
  return {
    ms: span[span.length - 1].t - span[0].t,
    created: increase(span.map((s) => s.created)),
    answered: grown.length ? grown[grown.length - 1].count : 0,
    median: quantile(0.5, grown),
    p90: quantile(0.9, grown),
  };
}
