import { age } from '../time.js';
import { useNow } from '../useNow.js';

// "updated 3s ago", counting on between reads, so a stalled refresh shows.
export function Updated({ at }) {
  const now = useNow(1000);
  if (at === null) return null;
  return <span class="hint updated">updated {age(new Date(at).toISOString(), now)} ago</span>;
}
