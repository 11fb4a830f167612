import { when } from '../time.js';

function scopeText(s) {
  if (s.scope === 'sandbox') return 'sandbox ' + s.sandbox_id;
  if (s.scope === 'org') return 'org ' + s.org_id;
  return 'project';
}

function rateText(limit) {
  return limit ? `${limit.per_minute}/min, burst ${limit.burst}` : 'unlimited';
}

// Secrets as GET …/secrets lists them: never a value, the API has none
// to give. onDelete(secret) is offered for the rows canDelete allows.
export function SecretsTable({ secrets, canDelete, onDelete }) {
  if (secrets.length === 0) return <p>No secrets yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Scope</th>
          <th>Bindings</th>
          <th>Plain HTTP</th>
          <th>Rate limit</th>
          <th>Created</th>
          <th>
            <span class="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {secrets.map((s) => (
          <tr key={s.id} data-name={s.name}>
            <td data-label="Name">
              <code>{s.name}</code>
            </td>
            <td data-label="Scope">{scopeText(s)}</td>
            <td data-label="Bindings">
              <ul class="bindings">
                {s.bindings.map((b) => (
                  <li key={b.host}>
                    <code>{b.host}</code> → <code>{b.header}: {b.format}</code>
                  </li>
                ))}
              </ul>
            </td>
            <td data-label="Plain HTTP">{s.bindings.some((b) => b.plaintext) ? 'yes (unsafe)' : 'no'}</td>
            <td data-label="Rate limit">{rateText(s.rate_limit)}</td>
            <td data-label="Created">{when(s.created_at)}</td>
            <td class="actions">
              {canDelete(s) && (
                <button type="button" aria-label={'Delete ' + s.name} onClick={() => onDelete(s)}>
                  Delete
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
