import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api.js';
import { watchEvents } from './events.js';
import { useLoad } from './load.js';
import { Link, navigate, pagePath } from './router.jsx';
import { ErrorLine } from './ErrorLine.jsx';
import { when } from './time.js';
import { Tabs, TabPanel } from './sandbox/Tabs.jsx';
import { Lifecycle } from './sandbox/Lifecycle.jsx';
import { TerminalPanel } from './sandbox/TerminalPanel.jsx';
import { Files } from './sandbox/Files.jsx';
import { Processes } from './sandbox/Processes.jsx';
import { NetworkLog } from './sandbox/NetworkLog.jsx';
import { ConsoleLog } from './sandbox/ConsoleLog.jsx';
import { Checkpoints } from './sandbox/Checkpoints.jsx';
import { Ports } from './sandbox/Ports.jsx';
import './sandbox/sandbox.css';

// The page's panels, one tab each, the first shown first.
const PANELS = [
  { id: 'terminal', title: 'Terminal', component: TerminalPanel },
  { id: 'files', title: 'Files', component: Files },
  { id: 'processes', title: 'Processes', component: Processes },
  { id: 'network', title: 'Network log', component: NetworkLog },
  { id: 'console', title: 'Console log', component: ConsoleLog },
  { id: 'checkpoints', title: 'Checkpoints', component: Checkpoints },
  { id: 'ports', title: 'Ports', component: Ports },
];

// One sandbox: what GET /v1/sandboxes/{id} says, read again whenever
// /v1/events reports a change of it (so a pause made elsewhere shows at
// once) and on every (re)connect of the stream; its lifecycle buttons;
// and its panels. A sandbox deleted meanwhile shows the API's 404 and the
// way back. Another sandbox's page (a fork's link) starts afresh.
export function Sandbox(props) {
  return <SandboxPage key={props.id} {...props} />;
}

function SandboxPage({ id, onKeyRefused }) {
  const path = '/v1/sandboxes/' + encodeURIComponent(id);
  const { data: sandbox, error, reload } = useLoad(path, onKeyRefused);
  const [stream, setStream] = useState('connecting');
  const [busy, setBusy] = useState(null);
  const [actionError, setActionError] = useState(null);
  const [tab, setTab] = useState(PANELS[0].id);
  // Panels are made when first shown and kept (a terminal's shell, a
  // directory), so a panel's calls wait until it is looked at.
  const [shown, setShown] = useState(new Set([PANELS[0].id]));
  // While this page deletes it, its events need no reading (a 404).
  const deleting = useRef(false);

  useEffect(
    () =>
      watchEvents({
        onEvent: (e) => e.id === id && !deleting.current && reload(),
        onSubscribed: () => {
          setStream('live');
          reload();
        },
        onStatus: setStream,
        onAuthError: onKeyRefused,
      }),
    [],
  );

  const fail = (e) => (e.status === 401 ? onKeyRefused(e) : setActionError(e));

  // POST …/{verb}; the page reads the sandbox again after it either way.
  async function act(verb) {
    setActionError(null);
    setBusy(verb);
    try {
      await call('POST', `${path}/${verb}`);
    } catch (e) {
      fail(e);
    }
    setBusy(null);
    reload();
  }

  async function remove() {
    if (!confirm(`Delete ${id}? Its files, processes and checkpoints go with it.`)) return;
    setActionError(null);
    setBusy('delete');
    deleting.current = true;
    try {
      await call('DELETE', path);
      navigate(pagePath('sandboxes'));
    } catch (e) {
      deleting.current = false;
      fail(e);
      setBusy(null);
      reload();
    }
  }

  function select(panel) {
    setTab(panel);
    setShown((s) => new Set(s).add(panel));
  }

  const gone = error && error.status === 404;
  return (
    <section aria-labelledby="sandbox-title" class="sandbox">
      <p>
        <Link href={pagePath('sandboxes')}>← Sandboxes</Link>
      </p>
      <div class="bar">
        <h2 id="sandbox-title">
          <code>{id}</code>
        </h2>
        <span class={'stream ' + (stream === 'live' ? 'live' : 'down')} role="status" aria-label="event stream">
          {stream}
        </span>
      </div>
      <ErrorLine error={error} />
      {!sandbox && !error && <p>Loading…</p>}
      {sandbox && !gone && (
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
            <dt>Created</dt>
            <dd>{when(sandbox.created_at)}</dd>
          </dl>
          <Lifecycle state={sandbox.state} busy={busy} onAct={act} onDelete={remove} />
          <ErrorLine error={actionError} />
          <Tabs tabs={PANELS} selected={tab} onSelect={select} label="Sandbox panels" />
          {PANELS.map(({ id: panel, component: Panel }) => (
            <TabPanel key={panel} id={panel} selected={tab}>
              {shown.has(panel) && (
                <Panel sandbox={sandbox} onKeyRefused={onKeyRefused}
                       onResume={() => act('resume')} onRestored={reload} />
              )}
            </TabPanel>
          ))}
        </>
      )}
    </section>
  );
}
