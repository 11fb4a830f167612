import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { useLoad } from '../load.js';
import { SecretForm } from './SecretForm.jsx';
import { SecretsTable } from './SecretsTable.jsx';

// One owner's secrets (a project's, or an org's when org): the list at
// path, a create form, and Delete after a confirmation. deletePath(secret)
// is where a row is deleted, null for one this key may not delete.
export function SecretsSection({ path, org, deletePath, onKeyRefused }) {
  const { data, error, setError, reload, fail } = useLoad(path, onKeyRefused);

  async function remove(secret) {
    if (!confirm(`Delete the secret ${secret.name}? Sandboxes stop getting it at once.`)) return;
    setError(null);
    try {
      await call('DELETE', deletePath(secret));
      reload();
    } catch (e) {
      fail(e);
    }
  }

  return (
    <>
      <ErrorLine error={error} />
      {data === null ? (
        !error && <p>Loading…</p>
      ) : (
        <SecretsTable secrets={data.secrets} canDelete={(s) => deletePath(s) !== null} onDelete={remove} />
      )}
      <details class="new-secret" open>
        <summary>{org ? 'New org secret' : 'New secret'}</summary>
        <SecretForm path={path} org={org} onCreated={reload} onKeyRefused={onKeyRefused} />
      </details>
    </>
  );
}
