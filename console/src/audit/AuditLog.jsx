import { useState } from 'preact/hooks';
import { ErrorLine } from '../ErrorLine.jsx';
import { useLoad } from '../load.js';
import { AuditTable } from './AuditTable.jsx';

const PAGE = 100;
const MOST = 1000;

// The distinct values of one field, for a select.
const valuesOf = (entries, field) => [...new Set(entries.map((e) => e[field]))].sort();

function Choice({ id, label, value, options, onChange }) {
  return (
    <>
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </>
  );
}

// An audit log at path, newest first. The API filters by sandbox (when
// bySandbox) and returns the newest `limit` rows (at most 1000) with no
// cursor: "Show older" asks for more. Action and outcome narrow the rows
// already read.
export function AuditLog({ path, bySandbox, idPrefix, onKeyRefused }) {
  const [sandbox, setSandbox] = useState('');
  const [query, setQuery] = useState({ sandbox: '', limit: PAGE });
  const [action, setAction] = useState('');
  const [outcome, setOutcome] = useState('');
  const params = new URLSearchParams({ limit: query.limit });
  if (query.sandbox) params.set('sandbox_id', query.sandbox);
  const { data, error, reload } = useLoad(path + '?' + params, onKeyRefused);
  const entries = data ? data.entries : [];
  const shown = entries.filter((e) => (!action || e.action === action) && (!outcome || e.status === outcome));

  const apply = (e) => {
    e.preventDefault();
    setQuery({ ...query, sandbox: sandbox.trim() });
  };

  return (
    <>
      <form class="audit-filters" onSubmit={apply} aria-label="Audit filters">
        {bySandbox && (
          <>
            <label for={idPrefix + 'sandbox'}>Sandbox id</label>
            <input id={idPrefix + 'sandbox'} value={sandbox} placeholder="all"
                   onInput={(e) => setSandbox(e.currentTarget.value)} />
            <button type="submit">Filter</button>
          </>
        )}
        <Choice id={idPrefix + 'action'} label="Action" value={action}
                options={valuesOf(entries, 'action')} onChange={setAction} />
        <Choice id={idPrefix + 'outcome'} label="Outcome" value={outcome}
                options={valuesOf(entries, 'status')} onChange={setOutcome} />
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </form>
      <ErrorLine error={error} />
      {data === null ? (
        !error && <p>Loading…</p>
      ) : (
        <>
          <p class="hint" role="status">
            {shown.length} of the newest {entries.length} entries
          </p>
          <AuditTable entries={shown} />
          {entries.length === query.limit && query.limit < MOST && (
            <button type="button" onClick={() => setQuery({ ...query, limit: Math.min(MOST, query.limit + PAGE) })}>
              Show older
            </button>
          )}
        </>
      )}
    </>
  );
}
