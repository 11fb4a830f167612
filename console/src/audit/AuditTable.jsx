import { when } from '../time.js';

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
  if (entries.length === 0) return <p>No entries.</p>;
  return (
    <table class="audit">
      <thead>
        <tr>
          <th>When</th>
          <th>Actor</th>
          <th>Action</th>
          <th>Target</th>
          <th>Outcome</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
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
        ))}
      </tbody>
    </table>
  );
}
