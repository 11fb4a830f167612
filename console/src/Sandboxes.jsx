import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api.js';
import { watchEvents } from './events.js';
import { ErrorLine } from './ErrorLine.jsx';
import { Link, sandboxPath } from './router.jsx';
import { age } from './time.js';

const AGE_TICK_MS = 10000;

// The lifecycle calls each state allows (docs/api.md), as row buttons.
const ACTIONS = {
  running: ['pause', 'suspend'],
  paused: ['resume', 'suspend'],
  suspended: ['resume'],
};

// The project's sandboxes: GET /v1/sandboxes, then kept current by
// /v1/events. An event changes its row's state at once; one for a sandbox
// not in the table (created elsewhere) re-reads the list, and so does
// every (re)connect of the stream, since events missed meanwhile are lost.
export function Sandboxes({ onKeyRefused }) {
  const [sandboxes, setSandboxes] = useState(null);
  const [error, setError] = useState(null);
  const [stream, setStream] = useState('connecting');
  const [template, setTemplate] = useState('default');
  const [creating, setCreating] = useState(false);
  const [now, setNow] = useState(Date.now());
  const known = useRef(new Set());

  // A refused key ends the session; anything else is shown where it happened.
  const fail = (e) => (e.status === 401 ? onKeyRefused(e) : setError(e));

  async function reload() {
    try {
      const { sandboxes: list } = await call('GET', '/v1/sandboxes');
      known.current = new Set(list.map((s) => s.id));
      setSandboxes(list);
    } catch (e) {
      fail(e);
    }
  }

  function onEvent({ id, state }) {
    if (!known.current.has(id)) {
      if (state !== 'deleted') reload();
      return;
    }
    setSandboxes((list) =>
      state === 'deleted'
        ? list.filter((s) => s.id !== id)
        : list.map((s) => (s.id === id ? { ...s, state } : s)),
    );
  }

  useEffect(() => {
    reload();
    const stop = watchEvents({
      onEvent,
      onSubscribed: () => {
        setStream('live');
        reload();
      },
      onStatus: setStream,
      onAuthError: onKeyRefused,
    });
    const tick = setInterval(() => setNow(Date.now()), AGE_TICK_MS);
    return () => {
      stop();
      clearInterval(tick);
    };
  }, []);

  async function create(e) {
    e.preventDefault();
    setCreating(true);
    setError(null);
    try {
      const sb = await call('POST', '/v1/sandboxes', { template: template.trim() || 'default' });
      // Its events may have come first: the answer is newer than any of them.
      known.current.add(sb.id);
      setSandboxes((list) => [...list.filter((s) => s.id !== sb.id), sb]);
    } catch (err) {
      fail(err);
    }
    setCreating(false);
  }

  // POST …/{verb}; its answer is the sandbox as it now is.
  async function act(id, verb) {
    setError(null);
    try {
      const sb = await call('POST', `/v1/sandboxes/${encodeURIComponent(id)}/${verb}`);
      setSandboxes((list) => list.map((s) => (s.id === id ? sb : s)));
    } catch (err) {
      fail(err);
    }
  }

  async function remove(id) {
    setError(null);
    try {
      await call('DELETE', '/v1/sandboxes/' + encodeURIComponent(id));
      onEvent({ id, state: 'deleted' });
    } catch (err) {
      // Deleted in another tab meanwhile: the list is behind, re-read it.
      if (err.status === 404) reload();
      fail(err);
    }
  }

  return (
    <section aria-labelledby="sandboxes-title">
      <div class="bar">
        <h2 id="sandboxes-title">Sandboxes</h2>
        <span class={'stream ' + (stream === 'live' ? 'live' : 'down')} role="status">
          {stream === 'live' ? 'live' : stream}
        </span>
      </div>
      <form class="create" onSubmit={create}>
        <label for="template">Template</label>
        <input id="template" value={template} onInput={(e) => setTemplate(e.currentTarget.value)} />
        <button type="submit" disabled={creating}>
          {creating ? 'Creating…' : 'Create sandbox'}
        </button>
      </form>
      <ErrorLine error={error} />
      {sandboxes === null ? (
        <p>Loading…</p>
      ) : sandboxes.length === 0 ? (
        <p>No sandboxes yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>ID</th>
              <th>State</th>
              <th>Template</th>
              <th>Node</th>
              <th>Age</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sandboxes.map((s) => (
              <tr key={s.id} data-id={s.id}>
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
                  {(ACTIONS[s.state] || []).map((verb) => (
                    <button type="button" key={verb} onClick={() => act(s.id, verb)}
                            aria-label={`${verb[0].toUpperCase()}${verb.slice(1)} ${s.id}`}>
                      {verb[0].toUpperCase() + verb.slice(1)}
                    </button>
                  ))}
                  <button type="button" onClick={() => remove(s.id)} aria-label={'Delete ' + s.id}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
