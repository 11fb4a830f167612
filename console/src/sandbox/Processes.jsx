import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';
import { exitText } from './format.js';
import { ProcessOutput } from './ProcessOutput.jsx';
import { useReloadOnChange } from './reload.js';
import { Listing } from '../Listing.jsx';

function command(p) {
  return p.cmd ? p.cmd.join(' ') : '(arguments that are not UTF-8)';
}

// The sandbox's background processes (GET …/processes), a command to
// start one (POST …/processes, as `sh -c`), the output of the one chosen
// and TERM/KILL (…/signal) for those still running.
export function Processes({ sandbox, onKeyRefused }) {
  const base = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/processes`;
  const { data, error, setError, reload, fail } = useLoad(base, onKeyRefused);
  const [cmd, setCmd] = useState('');
  const [starting, setStarting] = useState(false);
  const [shown, setShown] = useState(null);
  useReloadOnChange(sandbox.state, reload);

  async function start(e) {
    e.preventDefault();
    setError(null);
    setStarting(true);
    try {
      const p = await call('POST', base, { cmd: ['/bin/sh', '-c', cmd] });
      setShown(p.pid);
      setCmd('');
    } catch (err) {
      fail(err);
    }
    setStarting(false);
    reload();
  }

  async function signal(pid, name) {
    setError(null);
    try {
      await call('POST', `${base}/${pid}/signal`, { signal: name });
    } catch (err) {
      fail(err);
    }
    reload();
  }

  return (
    <>
      <form onSubmit={start}>
        <label for="process-cmd">Command</label>
        <input id="process-cmd" value={cmd} required placeholder="sh -c …"
               onInput={(e) => setCmd(e.currentTarget.value)} />
        <button type="submit" disabled={starting}>{starting ? 'Starting…' : 'Start'}</button>
        <button type="button" onClick={reload}>Refresh</button>
      </form>
      <ErrorLine error={error} />
      <Listing items={data && data.processes} error={error} empty="No processes."
               columns={['PID', 'Command', 'State', 'Started']} actions
               row={(p) => (
          <tr key={p.pid} data-pid={p.pid}>
            <td data-label="PID">{p.pid}</td>
            <td data-label="Command"><code>{command(p)}</code>{p.tty ? ' (terminal)' : ''}</td>
            <td data-label="State" class={'state ' + (p.running ? 'running' : 'exited')}>
              {p.running ? 'running' : exitText(p)}
            </td>
            <td data-label="Started">{when(p.started_at)}</td>
            <td class="actions">
              <button type="button" onClick={() => setShown(p.pid)} aria-label={`Output of ${p.pid}`}
                      aria-pressed={shown === p.pid}>
                Output
              </button>
              {p.running && ['TERM', 'KILL'].map((s) => (
                <button type="button" key={s} onClick={() => signal(p.pid, s)} aria-label={`${s} ${p.pid}`}>
                  {s}
                </button>
              ))}
            </td>
          </tr>
        )} />
      {shown !== null && (
        <ProcessOutput base={base} pid={shown} onExit={reload} onKeyRefused={onKeyRefused} />
      )}
    </>
  );
}
