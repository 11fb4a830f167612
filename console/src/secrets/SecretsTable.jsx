import { when } from '../time.js';
import { Listing } from '../Listing.jsx';

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
  return (
    <Listing items={secrets} empty="No secrets yet."
             columns={['Name', 'Scope', 'Bindings', 'Plain HTTP', 'Rate limit', 'Created']} actions
             row={(s) => (
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
      )} />
  );
}
