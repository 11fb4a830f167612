import { when } from '../time.js';
import { Listing } from '../Listing.jsx';

// What an entry was about: its secret, sandbox, request and org, those it has.
function target(e) {
  return [
    e.secret_id && 'secret ' + e.secret_id,
    e.sandbox_id && 'sandbox ' + e.sandbox_id,
    e.host && [e.method, e.host + (e.path || '')].filter(Boolean).join(' '),
    e.org_id && 'org ' + e.org_id,
  ].filter(Boolean);
}

export function AuditTable({ entries }) {
  return (
    <Listing items={entries} empty="No entries."
             columns={['When', 'Actor', 'Action', 'Target', 'Outcome']} class="audit"
             row={(e) => (
        <tr key={e.id} data-action={e.action}>
          <td data-label="When">{when(e.at)}</td>
          <td data-label="Actor">
            <code>{e.actor}</code>
          </td>
          <td data-label="Action">{e.action}</td>
          <td data-label="Target">
            {target(e).map((t) => (
              <div key={t}>{t}</div>
            ))}
          </td>
          <td data-label="Outcome" class={'outcome ' + (e.status === 'OK' ? 'ok' : 'refused')}>
            {e.status}
          </td>
        </tr>
      )} />
  );
}
