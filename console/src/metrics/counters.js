// Rates from Prometheus counters sampled now and then, as Prometheus'
// increase() and histogram_quantile() compute them.

// How much a counter grew over its samples (oldest first). A drop means
// the process restarted from zero: its new value is what it counted since.
export function increase(values) {
  let sum = 0;
  for (let i = 1; i < values.length; i++)
    sum += values[i] >= values[i - 1] ? values[i] - values[i - 1] : values[i];
  return sum;
}

// The q-quantile (0..1) of what a histogram's cumulative buckets
// ([{ le, count }] by le, the last le Infinity) counted, interpolated
// linearly within its bucket; null when they counted nothing. One in the
// +Inf bucket is the highest finite bound: the buckets know no more.
export function quantile(q, buckets) {
  const total = buckets.length ? buckets[buckets.length - 1].count : 0;
  if (!total) return null;
  const rank = q * total;
  let below = 0;
  let belowCount = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return below;
      return below + ((le - below) * (rank - belowCount)) / (count - belowCount);
    }
    below = le;
    belowCount = count;
  }
  return below;
}
