import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';
import { Link, pagePath } from './router.jsx';
import { ErrorLine } from './ErrorLine.jsx';
import { Terminal } from './Terminal.jsx';

// One sandbox: what GET /v1/sandboxes/{id} says, and a terminal on demand
// (it starts a process, so never by just opening the page). A sandbox
// deleted meanwhile shows the API's 404 and the way back.
export function Sandbox({ id, onKeyRefused }) {
  const [sandbox, setSandbox] = useState(null);
  const [error, setError] = useState(null);
  const [terminal, setTerminal] = useState(false);

  useEffect(() => {
    setSandbox(null);
    setError(null);
    setTerminal(false);
    call('GET', '/v1/sandboxes/' + encodeURIComponent(id))
      .then(setSandbox)
      .catch((e) => (e.status === 401 ? onKeyRefused(e) : setError(e)));
  }, [id]);

  return (
    <section aria-labelledby="sandbox-title">
      <p>
        <Link href={pagePath('sandboxes')}>← Sandboxes</Link>
      </p>
      <h2 id="sandbox-title">
        <code>{id}</code>
      </h2>
      <ErrorLine error={error} />
      {sandbox && (
        <>
          <dl class="facts">
            <dt>State</dt>
            <dd class={'state ' + sandbox.state}>{sandbox.state}</dd>
            <dt>Template</dt>
            <dd>{sandbox.template}</dd>
            <dt>Node</dt>
            <dd>{sandbox.node || '—'}</dd>
            <dt>Size</dt>
            <dd>
              {sandbox.cpus} vCPU, {sandbox.memory_mb} MiB
            </dd>
          </dl>
          {terminal ? (
            <Terminal sandboxId={id} onKeyRefused={onKeyRefused} />
          ) : (
            <button type="button" onClick={() => setTerminal(true)}>
              Open terminal
            </button>
          )}
        </>
      )}
    </section>
  );
}
