import { useEffect, useState } from 'preact/hooks';
import { send } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { LogLines } from '../LogLines.jsx';

// The newest this many bytes of the console (the API's tail, at most 1 MiB).
const TAIL_BYTES = 262144;

// Terminal control sequences (colours, cursor moves) the guest wrote for
// a terminal: noise in a page.
const CONTROL_SEQUENCES = /\x1b\[[0-9;?]*[A-Za-z]|\r/g;

// The guest's serial console (GET …/logs: kernel, init, /dev/console),
// any state; bytes that are not UTF-8 decoded leniently.
export function ConsoleLog({ sandbox, onKeyRefused }) {
  const [lines, setLines] = useState(null);
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState(null);

  async function reload() {
    try {
      const res = await send(`/v1/sandboxes/${encodeURIComponent(sandbox.id)}/logs?tail=${TAIL_BYTES}`);
      const text = new TextDecoder().decode(await res.arrayBuffer());
      setLines(text.replace(CONTROL_SEQUENCES, '').split('\n'));
      setTruncated(res.headers.get('X-Airlock-Log-Truncated') === 'true');
      setError(null);
    } catch (e) {
      if (e.status === 401) onKeyRefused(e);
      else setError(e);
    }
  }
  useEffect(() => {
    reload();
  }, [sandbox.id]);

  return (
    <>
      <button type="button" onClick={reload}>Refresh</button>
      <ErrorLine error={error} />
      {truncated && <p class="hint">Older output is left out: this is the newest {TAIL_BYTES / 1024} KiB.</p>}
      {lines === null ? !error && <p>Loading…</p> : <LogLines lines={lines} label="console log" />}
    </>
  );
}
