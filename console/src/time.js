// Times as the API gives them (RFC 3339) made short for a table.

// How long ago, in the largest whole unit: 42s, 5m, 3h, 2d.
export function age(at, now = Date.now()) {
  const s = Math.max(0, Math.floor((now - Date.parse(at)) / 1000));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

// The local date and time, to the second.
export function when(at) {
  return at ? new Date(at).toLocaleString() : '—';
}
