// A template build as it goes: POST /v1/templates with Accept:
// text/event-stream, its `log` lines as they come, then `done` (the
// template) or `error`. A spec the API refuses is a plain JSON error.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, send } from '../api.js';
import { readSse } from '../sse.js';

// The build goes on when the page stops reading; this says so.
const MAY_STILL_FINISH = '; the build may still finish: the list shows it once it does';

// { lines, startedAt, built, error, start(specText) }: startedAt is set
// while a build runs; built is the template `done` answered.
export function useBuild(onKeyRefused) {
  const [lines, setLines] = useState([]);
  const [startedAt, setStartedAt] = useState(null);
  const [built, setBuilt] = useState(null);
  const [error, setError] = useState(null);
  const reading = useRef(null);
  useEffect(() => () => reading.current && reading.current.abort(), []);

  async function start(specText) {
    const stop = new AbortController();
    reading.current = stop;
    setLines([]);
    setBuilt(null);
    setError(null);
    setStartedAt(Date.now());
    let ended = false;
    try {
      const res = await send('/v1/templates', {
        method: 'POST',
        body: specText,
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        signal: stop.signal,
      });
      await readSse(res, ({ event, data }) => {
        if (event === 'log') setLines((l) => [...l, data.line]);
        else if (event === 'done') setBuilt(data);
        else if (event === 'error') setError(data.error);
        ended = ended || event === 'done' || event === 'error';
      });
      if (!ended)
        setError({ code: 'unavailable', message: 'the build stream ended without a result' + MAY_STILL_FINISH });
    } catch (e) {
      if (stop.signal.aborted) return;
      if (e.status === 401) onKeyRefused(e);
      else if (e instanceof ApiError) setError(e);
      else setError({ code: 'unreachable', message: 'the build stream broke: ' + e.message + MAY_STILL_FINISH });
    }
    setStartedAt(null);
  }

  return { lines, startedAt, built, error, start };
}
