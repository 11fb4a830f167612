// Client-side pages under /console/ (the gateway answers index.html for
// them): the sandboxes table, and /console/sandboxes/{id}.
import { useEffect, useState } from 'preact/hooks';

const BASE = '/console/';

export function sandboxPath(id) {
  return BASE + 'sandboxes/' + encodeURIComponent(id);
}

function parse(pathname) {
  const m = pathname.slice(BASE.length).match(/^sandboxes\/([^/]+)$/);
  return m ? { page: 'sandbox', id: decodeURIComponent(m[1]) } : { page: 'sandboxes' };
}

export function navigate(path) {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

// The page the address bar names, following Back and Forward.
export function useRoute() {
  const [route, setRoute] = useState(parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}

// A link that changes page without reloading (the key and streams stay);
// modified clicks (new tab, …) are the browser's.
export function Link({ href, children, ...rest }) {
  const onClick = (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
