// Prometheus' text exposition format (0.0.4), as the gateway's GET /metrics
// answers it: one { name, labels, value } per sample line. # HELP and
// # TYPE lines, other comments and blank lines are skipped, and so is a
// line that does not parse; a timestamp after the value is ignored.
const NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,?)/y;
const ESCAPES = { '\\\\': '\\', '\\"': '"', '\\n': '\n' };
const SPECIAL = { '+Inf': Infinity, '-Inf': -Infinity, NaN: NaN };

function unescape(text) {
  return text.replace(/\\[\\"n]/g, (e) => ESCAPES[e]);
}

function parseLine(line) {
  NAME.lastIndex = 0;
  const name = NAME.exec(line);
  if (!name) return null;
  let at = NAME.lastIndex;
  const labels = {};
  if (line[at] === '{') {
    at++;
    for (;;) {
      LABEL.lastIndex = at;
      const label = LABEL.exec(line);
      if (!label) break;
      labels[label[1]] = unescape(label[2]);
      at = LABEL.lastIndex;
      if (!label[3]) break;
    }
    at = line.indexOf('}', at);
    if (at < 0) return null;
    at++;
  }
  const [text] = line.slice(at).trim().split(/\s+/);
  const value = text in SPECIAL ? SPECIAL[text] : Number(text);
  if (text === '' || (Number.isNaN(value) && text !== 'NaN')) return null;
  return { name: name[0], labels, value };
}

export function parsePrometheus(text) {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map(parseLine)
    .filter(Boolean);
}
