import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';

// A typed value as JSON: a number when it reads as one, else the text as
// typed, for the API to name what it refuses; empty is left out.
function field(text) {
  const t = text.trim();
  if (t === '') return undefined;
  return Number.isNaN(Number(t)) ? t : Number(t);
}

const typed = (value) => (value === null ? '' : String(value));

// A pool's floor (min, the API's `target`) and ceiling (`max`): PUT
// /v1/templates/{name}/warm-pool with what is typed. The API judges every
// value (noValidate: the browser does not), so a bad one shows its 400;
// the answer is the pool as it now is (onSaved).
export function WarmPoolForm({ pool, idPrefix, onSaved, onKeyRefused }) {
  const [min, setMin] = useState(typed(pool.target));
  const [max, setMax] = useState(typed(pool.max));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(false);

  async function save(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const path = `/v1/templates/${encodeURIComponent(pool.template)}/warm-pool`;
      const answer = await call('PUT', path, { target: field(min), max: field(max) });
      onSaved(answer);
      setMin(typed(answer.target));
      setMax(typed(answer.max));
      setSaved(true);
    } catch (err) {
      if (err.status === 401) onKeyRefused(err);
      setError(err);
    }
    setBusy(false);
  }

  return (
    <>
      <form class="pool-form" onSubmit={save} noValidate>
        <label for={idPrefix + '-min'}>Min</label>
        <input id={idPrefix + '-min'} type="number" min="0" max="64" value={min}
               onInput={(e) => setMin(e.currentTarget.value)} />
        <label for={idPrefix + '-max'}>Max</label>
        <input id={idPrefix + '-max'} type="number" min="1" max="64" value={max}
               placeholder="each node's own" onInput={(e) => setMax(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <span role="status">{saved && 'Saved.'}</span>
      </form>
      <ErrorLine error={error} />
    </>
  );
}
