// What a page keeps current while it is open: read(), now and again every
// `ms` after the last answer settled (a slow API never gets requests piled
// up). useLoad reads once; the admin pages and the metrics follow a
// cluster that moves.
import { useEffect, useRef, useState } from 'preact/hooks';

// How often the admin pages read again: a node's heartbeat comes every 2 s.
export const REFRESH_MS = 3000;

// { data, error, updatedAt, show }: data is null until the first answer;
// a failed read keeps the last data on screen with its error until a read
// succeeds again; a refused key ends the session. show(data) puts an
// answer of the page's own (a drain, a save) in place of what was read,
// and an older read still in flight no longer replaces it.
export function usePolled(read, ms, deps, onKeyRefused) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [updatedAt, setUpdatedAt] = useState(null);
  const shownAt = useRef(0);

  function show(d) {
    shownAt.current = Date.now();
    setData(d);
    setUpdatedAt(shownAt.current);
    setError(null);
  }

  useEffect(() => {
    let stopped = false;
    let timer;
    setData(null);
    setError(null);
    setUpdatedAt(null);
    async function once() {
      const started = Date.now();
      try {
        const d = await read();
        if (!stopped && started >= shownAt.current) show(d);
      } catch (e) {
        if (!stopped) (e.status === 401 ? onKeyRefused(e) : setError(e));
      }
      if (!stopped) timer = setTimeout(once, ms);
    }
    once();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
  return { data, error, updatedAt, show };
}
