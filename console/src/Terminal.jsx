import { useEffect, useRef, useState } from 'preact/hooks';
import { Terminal as XTerm } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { ApiError, call, send } from './api.js';
import { fromBase64, toBase64 } from './bytes.js';
import { readSse } from './sse.js';
import { ErrorLine } from './ErrorLine.jsx';
import { exitText } from './sandbox/format.js';

// bash where the image has it, else sh; a login shell either way (as
// `airlock shell` starts it).
const SHELL = 'command -v bash >/dev/null 2>&1 && exec bash -l; exec sh -l';

// Where exec reaches the guest (a migrating one runs on its source).
const RUNNABLE = ['running', 'migrating'];

// A shell on a PTY in the sandbox: POST …/processes with tty and
// stdin_open, its output from …/processes/{pid}/output (SSE), keys to
// …/stdin as bytes, the terminal's size to …/resize. Leaving the page
// hangs the shell up (HUP), as closing a terminal window does.
//
// A sandbox that is not running cannot run it: the API's refusal (409)
// of the start or of typed keys is shown with a way to resume. Once the
// sandbox runs again a refused start is retried, and an output stream
// that broke (a suspend ends it) is attached again: the guest's ring
// replays the screen.
export function Terminal({ sandboxId, state, onResume, onKeyRefused }) {
  const box = useRef(null);
  const session = useRef(null);
  const [error, setError] = useState(null);
  const [status, setStatus] = useState('starting');
  const [size, setSize] = useState('');
  const runnable = RUNNABLE.includes(state);

  useEffect(() => {
    const term = new XTerm({ cursorBlink: true, fontSize: 14 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    setSize(`${term.cols}×${term.rows}`);
    const stop = new AbortController();
    const base = `/v1/sandboxes/${encodeURIComponent(sandboxId)}/processes`;
    // pid once started; attached while its output stream is open; ended
    // once it exited.
    const shell = { pid: null, starting: false, attached: false, ended: false };
    const hangUp = () => call('POST', `${base}/${shell.pid}/signal`, { signal: 'HUP' }).catch(() => {});
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
      if (sending || shell.pid === null) return;
      sending = true;
      while (pending) {
        const data = pending;
        pending = '';
        await call('POST', `${base}/${shell.pid}/stdin`, { data_b64: toBase64(data) }).catch(fail);
      }
      sending = false;
    }
    const onData = term.onData((data) => {
      pending += data;
      flush();
    });
    const onResize = term.onResize(({ cols, rows }) => {
      setSize(`${cols}×${rows}`);
      if (shell.pid !== null) call('POST', `${base}/${shell.pid}/resize`, { rows, cols }).catch(fail);
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(box.current);

    function onOutput({ event, data }) {
      if (event === 'stdout' || event === 'stderr')
        term.write(data.data_b64 !== undefined ? fromBase64(data.data_b64) : data.data);
      else if (event === 'exit') {
        shell.ended = true;
        setStatus(exitText(data));
      } else if (event === 'error') setError(new ApiError(0, data.error.code, data.error.message));
    }

    // The output from the start: the ring replays what the screen showed.
    async function attach() {
      shell.attached = true;
      try {
        const res = await send(`${base}/${shell.pid}/output`, { signal: stop.signal });
        term.reset();
        setStatus('running');
        await readSse(res, onOutput);
      } catch (e) {
        fail(e);
      }
      shell.attached = false;
      if (!shell.ended && !stop.signal.aborted) setStatus('detached');
    }

    async function start() {
      shell.starting = true;
      setStatus('starting');
      try {
        const p = await call('POST', base, {
          cmd: ['/bin/sh', '-c', SHELL],
          tty: true,
          stdin_open: true,
          rows: term.rows,
          cols: term.cols,
          env: { TERM: 'xterm-256color' },
        });
        shell.pid = p.pid;
        // The page was left while the shell started: nobody will use it.
        if (stop.signal.aborted) return hangUp();
        setError(null);
        term.focus();
        flush();
        // Resized while it started: the PTY was made at the old size.
        call('POST', `${base}/${shell.pid}/resize`, { rows: term.rows, cols: term.cols }).catch(fail);
        await attach();
      } catch (e) {
        fail(e);
        setStatus('not started');
      } finally {
        shell.starting = false;
      }
    }

    session.current = {
      // The sandbox runs (again): carry on where it stopped.
      onRunnable() {
        setError(null);
        if (shell.starting || shell.attached || shell.ended) return;
        if (shell.pid === null) start();
        else attach();
      },
    };
    start();

    return () => {
      stop.abort();
      if (shell.pid !== null) hangUp();
      observer.disconnect();
      onData.dispose();
      onResize.dispose();
      term.dispose();
    };
  }, [sandboxId]);

  useEffect(() => {
    if (runnable) session.current.onRunnable();
  }, [runnable]);

  return (
    <section aria-labelledby="terminal-title">
      <div class="bar">
        <h3 id="terminal-title">Terminal</h3>
        <span class="stream" role="status" aria-label="terminal status">
          {runnable ? status : 'held'} · {size}
        </span>
      </div>
      {runnable && <ErrorLine error={error} />}
      {/* The notice covers the terminal rather than pushing it down: a
          shift under the pointer would lose the click on its button. */}
      <div class="terminal-box">
        <div class="terminal" ref={box} />
        {!runnable && (
          <div class="held">
            <div>
              <p>The sandbox is {state}: the terminal cannot run until it runs again.</p>
              <ErrorLine error={error} />
              {(state === 'paused' || state === 'suspended') && (
                <button type="button" onClick={onResume}>Resume sandbox</button>
              )}
            </div>
          </div>
        )}
      </div>
    </section>
  );
}
