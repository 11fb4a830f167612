import { useState } from 'preact/hooks';
import { call } from './api.js';
import { ErrorLine } from './ErrorLine.jsx';

// The key is checked with a call every key may make (GET /v1/sandboxes)
// before it is kept: a wrong one shows the API's refusal here.
export function SignIn({ reason, onSignedIn }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(reason);
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call('GET', '/v1/sandboxes', undefined, key.trim());
      onSignedIn(key.trim());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <main class="signin">
      <h1>airlock console</h1>
      <form onSubmit={submit}>
        <label for="key">API key</label>
        <input
          id="key"
          type="password"
          autocomplete="off"
          placeholder="ak_…"
          required
          autofocus
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      <ErrorLine error={error} />
      <p class="hint">The key stays in this tab only (sessionStorage) and goes to the API alone.</p>
    </main>
  );
}
