import { useEffect, useState } from 'preact/hooks';

// m:ss since `since` (ms), ticking every second while shown.
export function Elapsed({ since }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, []);
  const s = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <span>
      {Math.floor(s / 60)}:{String(s % 60).padStart(2, '0')}
    </span>
  );
}
