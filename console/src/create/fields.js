// Form text made into API fields. Values are passed on as typed, never
// checked here: the API's own 400 names what is wrong with them.

// A number field: absent when left empty (the API's default), else the
// number typed.
export function numberOrAbsent(text) {
  const t = text.trim();
  return t === '' ? undefined : Number(t);
}

// NAME=value per line (a name is everything before the first `=`) as the
// API's string map; absent when there are none.
export function keyValues(text) {
  const map = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.indexOf('=');
    if (at < 0) map[line.trim()] = '';
    else map[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return Object.keys(map).length ? map : undefined;
}

// Names separated by commas, spaces or lines; absent when there are none.
export function nameList(text) {
  const names = text.split(/[\s,]+/).filter(Boolean);
  return names.length ? names : undefined;
}

// body without its absent fields, as the API should see it.
export function withoutAbsent(body) {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}
