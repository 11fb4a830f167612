import { useEffect, useState } from 'preact/hooks';
import { ApiError, send } from '../api.js';
import { fromBase64 } from '../bytes.js';
import { readSse } from '../sse.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { LogLines } from '../LogLines.jsx';
import { exitText } from './format.js';

// One process's output: GET …/processes/{pid}/output (SSE) replays the
// guest's ring of it, then follows until the exit. stdout and stderr are
// shown interleaved, as a terminal would; bytes that are not UTF-8
// (data_b64) are decoded leniently, a character cut between two events
// whole. onExit() once the exit event comes.
export function ProcessOutput({ base, pid, onExit, onKeyRefused }) {
  const [text, setText] = useState('');
  const [status, setStatus] = useState('attaching…');
  const [error, setError] = useState(null);

  useEffect(() => {
    const stop = new AbortController();
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    setText('');
    setError(null);
    setStatus('attaching…');
    function onEvent({ event, data }) {
      if (event === 'stdout' || event === 'stderr') {
        const chunk = data.data_b64 === undefined
          ? data.data
          : decoders[event].decode(fromBase64(data.data_b64), { stream: true });
        setText((t) => t + chunk);
      } else if (event === 'exit') {
        setStatus(exitText(data));
        onExit();
      } else if (event === 'error') {
        setError(new ApiError(0, data.error.code, data.error.message));
      }
    }
    (async () => {
      try {
        const res = await send(`${base}/${pid}/output`, { signal: stop.signal });
        setStatus('running');
        await readSse(res, onEvent);
        setStatus((s) => (s === 'running' ? 'the output stream ended' : s));
      } catch (e) {
        if (stop.signal.aborted) return;
        if (e.status === 401) onKeyRefused(e);
        else setError(e);
        setStatus('not attached');
      }
    })();
    return () => stop.abort();
  }, [base, pid]);

  return (
    <section aria-labelledby="output-title" class="output">
      <div class="bar">
        <h3 id="output-title">Output of process {pid}</h3>
        <span role="status" aria-label="process status">{status}</span>
      </div>
      <ErrorLine error={error} />
      <LogLines lines={text.split('\n')} label={`output of process ${pid}`} />
    </section>
  );
}
