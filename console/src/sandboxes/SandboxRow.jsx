import { useState } from 'preact/hooks';
import { Link, sandboxPath } from '../router.jsx';
import { age } from '../time.js';
import { PROGRESS, title, verbsFor } from '../lifecycle.js';
import { CheckpointForm } from './CheckpointForm.jsx';
import './sandboxes.css';

// One sandbox of the table. ops (the page's) make the calls, update the
// list and show errors; each resolves once done, failed or not, with a
// note for the row or null. The row shows the call in progress meanwhile,
// its buttons disabled, and asks a checkpoint's name inline.
export function SandboxRow({ sandbox: s, now, ops }) {
  const [busy, setBusy] = useState(null);
  const [note, setNote] = useState(null);
  const [asking, setAsking] = useState(false);

  async function run(verb, ...args) {
    setBusy(verb);
    setNote(await ops[verb](s.id, ...args));
    setBusy(null);
  }

  function saveCheckpoint(body) {
    setAsking(false);
    run('checkpoint', body);
  }

  return (
    <tr data-id={s.id} aria-busy={busy ? 'true' : undefined}>
      <td data-label="ID">
        <Link href={sandboxPath(s.id)}>
          <code>{s.id}</code>
        </Link>
      </td>
      <td data-label="State" class={'state ' + s.state}>
        {s.state}
      </td>
      <td data-label="Template">{s.template}</td>
      <td data-label="Node">{s.node || '—'}</td>
      <td data-label="Age">{s.created_at ? age(s.created_at, now) : '—'}</td>
      <td class="actions">
        {asking ? (
          <CheckpointForm id={s.id} onSave={saveCheckpoint} onCancel={() => setAsking(false)} />
        ) : (
          <>
            {verbsFor(s.state, { snapshots: true }).map((verb) => (
              <button type="button" key={verb} disabled={busy !== null}
                      onClick={() => (verb === 'checkpoint' ? setAsking(true) : run(verb))}
                      aria-label={`${title(verb)} ${s.id}`}>
                {title(verb)}
              </button>
            ))}
            <button type="button" disabled={busy !== null} onClick={() => run('delete')}
                    aria-label={'Delete ' + s.id}>
              Delete
            </button>
          </>
        )}
        <span class="row-progress" role="status">
          {busy ? PROGRESS[busy] : note}
        </span>
      </td>
    </tr>
  );
}
