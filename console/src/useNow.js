// The time, renewed every `ms`: for "…s ago" texts that must keep counting
// between answers.
import { useEffect, useState } from 'preact/hooks';

export function useNow(ms) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(tick);
  }, [ms]);
  return now;
}
