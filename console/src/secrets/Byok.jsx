import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';

// A BYOK project's lock (docs/vault.md): Unlock hands vault the customer
// key for ttl seconds (vault keeps the data key, never this key), Lock
// ends that at once. Nothing says whether a project is BYOK, so this is
// always offered; a project on vault's master key gets the API's 409.
export function Byok({ onKeyRefused }) {
  const [customerKey, setCustomerKey] = useState('');
  const [ttl, setTtl] = useState('3600');
  const [state, setState] = useState(null);
  const [error, setError] = useState(null);

  async function send(verb, body) {
    setError(null);
    try {
      setState(await call('POST', '/v1/secrets/' + verb, body));
    } catch (e) {
      if (e.status === 401) onKeyRefused(e);
      else setError(e);
    }
  }

  function unlock(e) {
    e.preventDefault();
    const body = { customer_key: customerKey.trim(), ttl_seconds: Number(ttl) };
    setCustomerKey('');
    send('unlock', body);
  }

  return (
    <details class="byok">
      <summary>BYOK: unlock or lock the project</summary>
      <form onSubmit={unlock}>
        <label for="byok-key">Customer key</label>
        <input id="byok-key" type="password" autocomplete="off" required placeholder="64 hex digits"
               value={customerKey} onInput={(e) => setCustomerKey(e.currentTarget.value)} />
        <label for="byok-ttl">For seconds</label>
        <input id="byok-ttl" type="number" value={ttl} onInput={(e) => setTtl(e.currentTarget.value)} />
        <button type="submit">Unlock</button>
        <button type="button" onClick={() => send('lock')}>
          Lock
        </button>
      </form>
      {state && (
        <p role="status">
          {state.unlocked ? 'Unlocked until ' + when(state.expires_at) : 'Locked'}
        </p>
      )}
      <ErrorLine error={error} />
    </details>
  );
}
