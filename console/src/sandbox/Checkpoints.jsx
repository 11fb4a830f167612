import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { useLoad, useOperation } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { Link, sandboxPath } from '../router.jsx';
import { when } from '../time.js';
import { Listing } from '../Listing.jsx';

// The sandbox's checkpoints (GET …/checkpoints): create one (POST, a name
// and a kind), restore the sandbox to one (POST …/restore, after a
// confirm), delete one, and fork (POST …/fork: the live sandbox, or a
// `full` checkpoint) into new sandboxes, linked once made. Each of these
// can take a while: its button is disabled and its progress shown.
// onRestored() once a restore has answered (the sandbox changed).
export function Checkpoints({ sandbox, onRestored, onKeyRefused }) {
  const base = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}`;
  const load = useLoad(base + '/checkpoints', onKeyRefused);
  const { data, error } = load;
  const { progress, operate } = useOperation(load);
  const [name, setName] = useState('');
  const [kind, setKind] = useState('disk');
  const [count, setCount] = useState(1);
  const [forks, setForks] = useState([]);

  const create = (e) => {
    e.preventDefault();
    operate(`Checkpointing ${name}…`, async () => {
      await call('POST', base + '/checkpoints', { name, kind });
      setName('');
    });
  };

  const restore = (checkpoint) =>
    confirm(`Restore ${sandbox.id} to ${checkpoint}? What changed since is lost.`) &&
    operate(`Restoring ${checkpoint}…`, async () => {
      await call('POST', base + '/restore', { checkpoint });
      onRestored();
    });

  const remove = (checkpoint) =>
    confirm(`Delete checkpoint ${checkpoint}?`) &&
    operate(`Deleting ${checkpoint}…`, () =>
      call('DELETE', `${base}/checkpoints/${encodeURIComponent(checkpoint)}`));

  const fork = (checkpoint) =>
    operate(`Forking${checkpoint ? ' ' + checkpoint : ''}…`, async () => {
      const body = { count: Number(count) };
      if (checkpoint) body.checkpoint = checkpoint;
      const { sandboxes } = await call('POST', base + '/fork', body);
      setForks((made) => [...made, ...sandboxes]);
    });

  const busy = !!progress;
  return (
    <>
      <form onSubmit={create}>
        <label for="checkpoint-name">Name</label>
        <input id="checkpoint-name" value={name} required placeholder="a-z 0-9 _ -"
               onInput={(e) => setName(e.currentTarget.value)} />
        <label for="checkpoint-kind">Kind</label>
        <select id="checkpoint-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="disk">disk (a restore boots again)</option>
          <option value="full">full (disk, memory, devices)</option>
        </select>
        <button type="submit" disabled={busy}>Create checkpoint</button>
      </form>
      <form onSubmit={(e) => { e.preventDefault(); fork(null); }}>
        <label for="fork-count">Forks</label>
        <input id="fork-count" type="number" min="1" max="16" value={count} class="count"
               onInput={(e) => setCount(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>Fork the running sandbox</button>
      </form>
      <p role="status" class="progress">{progress}</p>
      <ErrorLine error={error} />
      {forks.length > 0 && (
        <p class="forks">
          Forks:{' '}
          {forks.map((f) => (
            <Link key={f.id} href={sandboxPath(f.id)}><code>{f.id}</code></Link>
          ))}
        </p>
      )}
      <Listing items={data && data.checkpoints} error={error} empty="No checkpoints yet."
               columns={['Name', 'Kind', 'Created', 'Stored']} actions
               row={(c) => (
          <tr key={c.name} data-name={c.name}>
            <td data-label="Name"><code>{c.name}</code></td>
            <td data-label="Kind">{c.kind}</td>
            <td data-label="Created">{when(c.created_at)}</td>
            <td data-label="Stored">{c.stored ? 'in the snapshot store' : 'on its node'}</td>
            <td class="actions">
              <button type="button" onClick={() => restore(c.name)} disabled={busy}
                      aria-label={'Restore ' + c.name}>
                Restore
              </button>
              {c.kind === 'full' && (
                <button type="button" onClick={() => fork(c.name)} disabled={busy}
                        aria-label={'Fork ' + c.name}>
                  Fork
                </button>
              )}
              <button type="button" onClick={() => remove(c.name)} disabled={busy}
                      aria-label={'Delete ' + c.name}>
                Delete
              </button>
            </td>
          </tr>
        )} />
    </>
  );
}
