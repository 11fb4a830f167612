import { useEffect, useRef } from 'preact/hooks';

// Reads a panel again when the sandbox's state changes (not on mount,
// where useLoad reads it already): what a paused sandbox refused (409)
// answers once it runs, and what a running one showed goes stale.
export function useReloadOnChange(state, reload) {
  const mounted = useRef(false);
  useEffect(() => {
    if (mounted.current) reload();
    mounted.current = true;
  }, [state]);
}
