// GET /v1/events, the project's lifecycle events (docs/api.md). Events
// are at most once with no replay, so after every (re)connect the caller
// re-reads the list (onSubscribed), which is then the truth.
import { send } from './api.js';
import { readSse } from './sse.js';

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 15000;

// Calls onEvent(data) per `event: sandbox`, onSubscribed() once the stream
// is subscribed, onStatus(text) when it drops, onAuthError(error) when the
// key is refused (no retry then). Returns a function that stops it.
export function watchEvents({ onEvent, onSubscribed, onStatus, onAuthError }) {
  const stop = new AbortController();
  let retry = RETRY_MIN_MS;

  async function readStream() {
    const res = await send('/v1/events', { signal: stop.signal });
    await readSse(
      res,
      ({ event, data }) => event === 'sandbox' && onEvent(data),
      (comment) => {
        if (comment !== 'subscribed') return;
        retry = RETRY_MIN_MS;
        onSubscribed();
      },
    );
  }

  (async () => {
    while (!stop.signal.aborted) {
      try {
        await readStream();
        if (stop.signal.aborted) return;
        onStatus('event stream ended; reconnecting');
      } catch (e) {
        if (stop.signal.aborted) return;
        if (e.status === 401) {
          onAuthError(e);
          return;
        }
        onStatus(`event stream: ${e.message}; reconnecting in ${Math.round(retry / 1000)} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, retry));
      retry = Math.min(retry * 2, RETRY_MAX_MS);
    }
  })();
  return () => stop.abort();
}
