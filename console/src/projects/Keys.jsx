import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { useLoad } from '../load.js';
import { when } from '../time.js';
import { NewKey } from './NewKey.jsx';
import { Listing } from '../Listing.jsx';

// A project's API keys (GET …/keys: revoked ones too, never a secret),
// a form to create one and Revoke after a confirmation; the API's 409
// (the last admin key, one revoked already) is shown as it says.
export function Keys({ project, onKeyRefused }) {
  const path = '/v1/projects/' + encodeURIComponent(project) + '/keys';
  const { data, error, setError, reload, fail } = useLoad(path, onKeyRefused);
  const [name, setName] = useState('');
  const [created, setCreated] = useState(null);

  async function create(e) {
    e.preventDefault();
    setError(null);
    try {
      setCreated(await call('POST', path, name.trim() ? { name: name.trim() } : {}));
      setName('');
      reload();
    } catch (err) {
      fail(err);
    }
  }

  async function revoke(key) {
    if (!confirm(`Revoke ${key.id}${key.name ? ' (' + key.name + ')' : ''}? Its next request is refused.`)) return;
    setError(null);
    try {
      await call('DELETE', path + '/' + encodeURIComponent(key.id));
      reload();
    } catch (err) {
      fail(err);
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <h3 id="keys-title">API keys</h3>
      <form onSubmit={create} aria-label="New key">
        <label for="key-name">Key name</label>
        <input id="key-name" value={name} placeholder="ci (optional)" onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit">Create key</button>
      </form>
      {created && <NewKey created={created} onDismiss={() => setCreated(null)} />}
      <ErrorLine error={error} />
      <Listing items={data && data.keys} error={error} empty="No keys yet."
               columns={['ID', 'Name', 'Admin', 'Created', 'Revoked']} actions
               row={(k) => (
          <tr key={k.id} data-id={k.id} class={k.revoked_at ? 'revoked' : undefined}>
            <td data-label="ID">
              <code>{k.id}</code>
            </td>
            <td data-label="Name">{k.name || '—'}</td>
            <td data-label="Admin">{k.admin ? 'yes' : 'no'}</td>
            <td data-label="Created">{when(k.created_at)}</td>
            <td data-label="Revoked">{k.revoked_at ? when(k.revoked_at) : 'no'}</td>
            <td class="actions">
              {!k.revoked_at && (
                <button type="button" aria-label={'Revoke ' + k.id} onClick={() => revoke(k)}>
                  Revoke
                </button>
              )}
            </td>
          </tr>
        )} />
    </section>
  );
}
