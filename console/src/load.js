// What most pages do first: GET a path of the API and show its answer.
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';

// { data, error, reload, fail }: data is null until the answer comes; a
// refused key ends the session (onKeyRefused), any other error is the
// page's to show. fail(e) does the same for the page's own calls.
export function useLoad(path, onKeyRefused) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const fail = (e) => (e.status === 401 ? onKeyRefused(e) : setError(e));

  async function reload() {
    try {
      setData(await call('GET', path));
      setError(null);
    } catch (e) {
      fail(e);
    }
  }

  useEffect(() => {
    setData(null);
    setError(null);
    reload();
  }, [path]);
  return { data, error, setError, reload, fail };
}
