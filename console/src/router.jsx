// Client-side pages under /console/ (the gateway answers index.html for
// them): /console/{page} and /console/{page}/{id}. Which pages exist is
// pages.jsx's table; this file only reads and changes the address.
import { useEffect, useState } from 'preact/hooks';

const BASE = '/console/';

export function pagePath(page, id) {
  return BASE + page + (id === undefined ? '' : '/' + encodeURIComponent(id));
}

export function sandboxPath(id) {
  return pagePath('sandboxes', id);
}

// { page, id }: page '' is the start page; id undefined when absent.
function parse(pathname) {
  const parts = pathname.slice(BASE.length).split('/').filter(Boolean);
  if (parts.length > 2) return { page: null };
  return { page: parts[0] || '', id: parts[1] === undefined ? undefined : decodeURIComponent(parts[1]) };
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
