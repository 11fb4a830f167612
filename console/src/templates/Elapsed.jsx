import { useNow } from '../useNow.js';

// m:ss since `since` (ms), ticking every second while shown.
export function Elapsed({ since }) {
  const now = useNow(1000);
  const s = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <span>
      {Math.floor(s / 60)}:{String(s % 60).padStart(2, '0')}
    </span>
  );
}
