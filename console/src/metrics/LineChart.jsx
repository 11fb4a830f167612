// A small line chart of samples over the last windowMs, drawn as SVG:
// axes, a line per series (broken where a value is null), the current
// value as text, and the same numbers as a text summary and a table for
// whoever cannot see the drawing.
// The drawing's own units; it is scaled to the width it has.
const W = 420;
const H = 150;
const PAD = { left: 64, right: 8, top: 10, bottom: 22 };

// The smallest of 1, 2, 5 × 10^k at or above v (at least 1).
function niceCeil(v) {
  if (!(v > 1)) return 1;
  const step = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * step).find((c) => c >= v);
}

// SVG path data of the points, a new stroke after each gap.
function pathOf(points, x, y) {
  let d = '';
  let drawing = false;
  for (const p of points) {
    if (p.v === null) {
      drawing = false;
      continue;
    }
    d += `${drawing ? 'L' : 'M'}${x(p.t).toFixed(1)} ${y(p.v).toFixed(1)} `;
    drawing = true;
  }
  return d;
}

// Points with neighbours missing on both sides: a path alone would not
// show them.
function lonePoints(points) {
  return points.filter(
    (p, i) => p.v !== null && points[i - 1]?.v == null && points[i + 1]?.v == null);
}

// series: [{ name, className, points: [{ t, v }] }], all of the same
// times; format(v) says a value with its unit; current: the latest value
// as a sentence.
export function LineChart({ id, title, what, series, format, current, windowMs, now }) {
  const from = now - windowMs;
  const shown = series.map((s) => ({ ...s, points: s.points.filter((p) => p.t >= from) }));
  const values = shown.flatMap((s) => s.points.map((p) => p.v)).filter((v) => v !== null);
  const top = niceCeil(Math.max(0, ...values));
  const x = (t) => PAD.left + ((t - from) / windowMs) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const minutes = Math.round(windowMs / 60000);
  const summary =
    `${title}: ${current}. ${values.length} values over the last ${minutes} minutes` +
    (values.length ? `, highest ${format(Math.max(...values))}.` : '.');
  const newestFirst = shown[0].points.map((p, i) => i).reverse();

  return (
    <figure class="chart" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <p class="hint">{what}</p>
      <p class="current">{current}</p>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        {[0, top / 2, top].map((v) => (
          <g key={v} class="grid">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end">
              {format(v)}
            </text>
          </g>
        ))}
        {[
          [from, `−${minutes} min`, 'start'],
          [from + windowMs / 2, `−${minutes / 2} min`, 'middle'],
          [now, 'now', 'end'],
        ].map(([t, label, anchor]) => (
          <text key={label} class="axis" x={x(t)} y={H - 6} text-anchor={anchor}>
            {label}
          </text>
        ))}
        {shown.map((s) => (
          <g key={s.name} class={'series ' + s.className}>
            <path d={pathOf(s.points, x, y)} />
            {lonePoints(s.points).map((p) => (
              <circle key={p.t} cx={x(p.t)} cy={y(p.v)} r="2.5" />
            ))}
          </g>
        ))}
      </svg>
      {shown.length > 1 && (
        <p class="legend">
          {shown.map((s) => (
            <span key={s.name} class={'series ' + s.className}>
              {s.name}
            </span>
          ))}
        </p>
      )}
      <details>
        <summary>Values as a table</summary>
        <table>
          <thead>
            <tr>
              <th>Time</th>
              {shown.map((s) => (
                <th key={s.name}>{s.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((i) => (
              <tr key={shown[0].points[i].t}>
                <td data-label="Time">{new Date(shown[0].points[i].t).toLocaleTimeString()}</td>
                {shown.map(({ name, points }) => (
                  <td key={name} data-label={name}>
                    {points[i].v === null ? '—' : format(points[i].v)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
