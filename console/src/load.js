// What most pages do first: GET a path of the API and show its answer.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from './api.js';

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

// A page's own calls one at a time (load: useLoad's answer): operate(text,
// work) shows text as progress until work() ends, shows its error as the
// page's (a non-API failure, e.g. reading a local file, as "failed"), and
// reads the page's GET again whatever happened. setProgress lets work()
// say how far it is.
export function useOperation({ setError, fail, reload }) {
  const [progress, setProgress] = useState('');
  async function operate(text, work) {
    setError(null);
    setProgress(text);
    try {
      await work();
    } catch (e) {
      fail(e instanceof ApiError ? e : new ApiError(0, 'failed', e.message));
    }
    setProgress('');
    await reload();
  }
  return { progress, setProgress, operate };
}
