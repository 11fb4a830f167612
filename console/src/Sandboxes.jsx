import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api.js';
import { watchEvents } from './events.js';
import { ErrorLine } from './ErrorLine.jsx';
import { CreateForm } from './create/CreateForm.jsx';
import { SandboxRow } from './sandboxes/SandboxRow.jsx';
import { Listing } from './Listing.jsx';
import { useNow } from './useNow.js';

const AGE_TICK_MS = 10000;

const sandboxUrl = (id, rest = '') => '/v1/sandboxes/' + encodeURIComponent(id) + rest;

// The project's sandboxes: GET /v1/sandboxes, then kept current by
// /v1/events. An event changes its row's state at once; one for a sandbox
// not in the table (created elsewhere) re-reads the list, and so does
// every (re)connect of the stream, since events missed meanwhile are lost.
export function Sandboxes({ onKeyRefused }) {
  const [sandboxes, setSandboxes] = useState(null);
  const [error, setError] = useState(null);
  const [stream, setStream] = useState('connecting');
  const now = useNow(AGE_TICK_MS);
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

  // Sandboxes the API answered with (a create, a fork): newer than any
  // event that may have come first.
  function add(answered) {
    for (const sb of answered) known.current.add(sb.id);
    const ids = new Set(answered.map((sb) => sb.id));
    setSandboxes((list) => [...list.filter((s) => !ids.has(s.id)), ...answered]);
  }

  function replace(sb) {
    setSandboxes((list) => list.map((s) => (s.id === sb.id ? sb : s)));
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
    return stop;
  }, []);

  // Runs one call of the page: the error line shows its failure (and
  // only the newest call's); resolves with its note for the row, or null.
  async function attempt(fn) {
    setError(null);
    try {
      return (await fn()) || null;
    } catch (err) {
      fail(err);
      return null;
    }
  }

  const create = (body) => attempt(async () => add([await call('POST', '/v1/sandboxes', body)]));

  // POST …/{verb}; its answer is the sandbox as it now is.
  const lifecycle = (verb) => (id) =>
    attempt(async () => replace(await call('POST', sandboxUrl(id, '/' + verb))));

  // What a row's buttons do (SandboxRow): each answer updates the list.
  const ops = {
    pause: lifecycle('pause'),
    resume: lifecycle('resume'),
    suspend: lifecycle('suspend'),
    checkpoint: (id, body) =>
      attempt(async () => {
        const cp = await call('POST', sandboxUrl(id, '/checkpoints'), body);
        return `Checkpoint ${cp.name} (${cp.kind}) made`;
      }),
    fork: (id) =>
      attempt(async () => {
        const { sandboxes: forks } = await call('POST', sandboxUrl(id, '/fork'), { count: 1 });
        add(forks);
        return 'Forked: ' + forks.map((f) => f.id).join(', ');
      }),
    delete: (id) =>
      attempt(async () => {
        try {
          await call('DELETE', sandboxUrl(id));
        } catch (err) {
          // Deleted in another tab meanwhile: the list is behind, re-read it.
          if (err.status === 404) reload();
          throw err;
        }
        onEvent({ id, state: 'deleted' });
      }),
  };

  return (
    <section aria-labelledby="sandboxes-title">
      <div class="bar">
        <h2 id="sandboxes-title">Sandboxes</h2>
        <span class={'stream ' + (stream === 'live' ? 'live' : 'down')} role="status">
          {stream === 'live' ? 'live' : stream}
        </span>
      </div>
      <CreateForm onCreate={create} onKeyRefused={onKeyRefused} />
      <ErrorLine error={error} />
      <Listing items={sandboxes} empty="No sandboxes yet."
               columns={['ID', 'State', 'Template', 'Node', 'Age']} actions
               row={(s) => (
          <SandboxRow key={s.id} sandbox={s} now={now} ops={ops} />
        )} />
    </section>
  );
}
