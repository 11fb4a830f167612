import { useEffect, useRef, useState } from 'preact/hooks';
import { Terminal as XTerm } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { ApiError, call, send } from './api.js';
import { fromBase64, toBase64 } from './bytes.js';
import { readSse } from './sse.js';
import { ErrorLine } from './ErrorLine.jsx';

// bash where the image has it, else sh; a login shell either way (as
// `airlock shell` starts it).
const SHELL = 'command -v bash >/dev/null 2>&1 && exec bash -l; exec sh -l';

// A shell on a PTY in the sandbox: POST …/processes with tty and
// stdin_open, its output from …/processes/{pid}/output (SSE), keys to
// …/stdin as bytes, the terminal's size to …/resize. Leaving the page
// hangs the shell up (HUP), as closing a terminal window does.
export function Terminal({ sandboxId, onKeyRefused }) {
  const box = useRef(null);
  const [error, setError] = useState(null);
  const [status, setStatus] = useState('starting');
  const [size, setSize] = useState('');

  useEffect(() => {
    const term = new XTerm({ cursorBlink: true, fontSize: 14 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    setSize(`${term.cols}×${term.rows}`);
    const stop = new AbortController();
    const base = `/v1/sandboxes/${encodeURIComponent(sandboxId)}/processes`;
    let pid = null;
    const hangUp = () => call('POST', `${base}/${pid}/signal`, { signal: 'HUP' }).catch(() => {});
    const fail = (e) => {
      if (stop.signal.aborted) return;
      if (e.status === 401) onKeyRefused(e);
      else setError(e);
    };

    // Keys in order, one request at a time: what was typed meanwhile goes
    // in the next one.
    let pending = '';
    let sending = false;
    async function flush() {
      if (sending || pid === null) return;
      sending = true;
      while (pending) {
        const data = pending;
        pending = '';
        await call('POST', `${base}/${pid}/stdin`, { data_b64: toBase64(data) }).catch(fail);
      }
      sending = false;
    }
    const onData = term.onData((data) => {
      pending += data;
      flush();
    });
    const onResize = term.onResize(({ cols, rows }) => {
      setSize(`${cols}×${rows}`);
      if (pid !== null) call('POST', `${base}/${pid}/resize`, { rows, cols }).catch(fail);
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(box.current);

    function onOutput({ event, data }) {
      if (event === 'stdout' || event === 'stderr')
        term.write(data.data_b64 !== undefined ? fromBase64(data.data_b64) : data.data);
      else if (event === 'exit')
        setStatus(`exited (code ${data.exit_code}${data.signal ? ', signal ' + data.signal : ''})`);
      else if (event === 'error') setError(new ApiError(0, data.error.code, data.error.message));
    }

    (async () => {
      try {
        const p = await call('POST', base, {
          cmd: ['/bin/sh', '-c', SHELL],
          tty: true,
          stdin_open: true,
          rows: term.rows,
          cols: term.cols,
          env: { TERM: 'xterm-256color' },
        });
        pid = p.pid;
        // The page was left while the shell started: nobody will use it.
        if (stop.signal.aborted) return hangUp();
        setStatus('running');
        term.focus();
        flush();
        // Resized while it started: the PTY was made at the old size.
        call('POST', `${base}/${pid}/resize`, { rows: term.rows, cols: term.cols }).catch(fail);
        await readSse(await send(`${base}/${pid}/output`, { signal: stop.signal }), onOutput);
      } catch (e) {
        fail(e);
        setStatus('ended');
      }
    })();

    return () => {
      stop.abort();
      if (pid !== null) hangUp();
      observer.disconnect();
      onData.dispose();
      onResize.dispose();
      term.dispose();
    };
  }, [sandboxId]);

  return (
    <section aria-labelledby="terminal-title">
      <div class="bar">
        <h3 id="terminal-title">Terminal</h3>
        <span class="stream" role="status" aria-label="terminal status">
          {status} · {size}
        </span>
      </div>
      <ErrorLine error={error} />
      <div class="terminal" ref={box} />
    </section>
  );
}
