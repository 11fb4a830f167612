import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { useLoad } from '../load.js';
import { fieldNamed } from '../secrets/fieldNamed.js';
import '../secrets/warning.css';

const limitText = (limit) => (limit === -1 ? 'unlimited' : String(limit));

// A project's quotas (docs/api.md "Quotas"): each one's limit in force,
// what the project uses, whether it is the scheduler's default. New
// limits are PUT together, only those typed: -1 unlimited, 0 back to the
// default; the API judges the numbers (a 400 names the quota, nothing changes).
export function Quotas({ project, onKeyRefused }) {
  const path = '/v1/projects/' + encodeURIComponent(project) + '/quotas';
  const { data, error, setError, fail } = useLoad(path, onKeyRefused);
  const [typed, setTyped] = useState({});
  const [answer, setAnswer] = useState(null);
  const quotas = (answer || data)?.quotas;
  const invalid = fieldNamed(error);

  async function save(e) {
    e.preventDefault();
    setError(null);
    const body = Object.fromEntries(
      Object.entries(typed).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, Number(v)]),
    );
    try {
      setAnswer(await call('PUT', path, body));
      setTyped({});
    } catch (err) {
      fail(err);
    }
  }

  return (
    <section aria-labelledby="quotas-title">
      <h3 id="quotas-title">Quotas</h3>
      {!quotas ? (
        !error && <p>Loading…</p>
      ) : (
        <form class="quotas" onSubmit={save} aria-label="Quotas">
          <table>
            <thead>
              <tr>
                <th>Quota</th>
                <th>Limit</th>
                <th>Used</th>
                <th>Default</th>
                <th>New limit</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(quotas).map(([kind, q]) => (
                <tr key={kind} data-quota={kind}>
                  <th scope="row">{kind}</th>
                  <td data-label="Limit" class="limit">{limitText(q.limit)}</td>
                  <td data-label="Used">{q.used}</td>
                  <td data-label="Default">{q.is_default ? 'default' : 'own'}</td>
                  <td data-label="New limit">
                    <input type="number" aria-label={'New limit for ' + kind}
                           aria-invalid={invalid === kind ? 'true' : undefined} value={typed[kind] || ''}
                           onInput={(e) => setTyped({ ...typed, [kind]: e.currentTarget.value })} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="hint">-1 is unlimited, 0 the scheduler's default again.</p>
          <button type="submit">Save limits</button>
        </form>
      )}
      <ErrorLine error={error} />
    </section>
  );
}
