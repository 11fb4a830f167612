import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, session } from './api.js';
import { SignIn } from './SignIn.jsx';
import { ErrorLine } from './ErrorLine.jsx';
import { PAGES, START_PAGE, pageFor } from './pages.jsx';
import { Link, pagePath, useRoute } from './router.jsx';
import './style.css';

// Whether the key is the admin key, as GET /v1/whoami says; null while
// asking.
function useAdmin(key, onKeyRefused) {
  const [admin, setAdmin] = useState(null);
  useEffect(() => {
    if (!key) return;
    setAdmin(null);
    call('GET', '/v1/whoami')
      .then((me) => setAdmin(me.admin))
      .catch((e) => (e.status === 401 ? onKeyRefused(e) : setAdmin(false)));
  }, [key]);
  return admin;
}

function Nav({ current, admin }) {
  return (
    <nav aria-label="Pages">
      {PAGES.filter((p) => !p.admin || admin).map((p) => (
        <Link key={p.path} href={pagePath(p.path)}
              aria-current={p.path === current ? 'page' : undefined}>
          {p.title}
        </Link>
      ))}
    </nav>
  );
}

// The route's page; an admin page for a project key and an address with
// no page say so, as the API would.
function Page({ route, admin, onKeyRefused }) {
  const found = pageFor(route);
  if (!found)
    return <ErrorLine error={{ code: 'not_found', message: 'the console has no page ' + location.pathname }} />;
  // Not before whoami has answered: for a project key an admin page's
  // calls would be refused.
  if (found.entry.admin && admin === null) return <p>Loading…</p>;
  if (found.entry.admin && !admin)
    return <ErrorLine error={{ code: 'permission_denied', message: 'this page needs the admin key' }} />;
  const Component = found.component;
  return <Component id={route.id} admin={admin} onKeyRefused={onKeyRefused} />;
}

// Signed in while sessionStorage holds a key (this tab only, gone when it
// closes); a key the API stops accepting signs out with its reason.
function App() {
  const [key, setKey] = useState(session.key());
  const [reason, setReason] = useState(null);
  const route = useRoute();
  const signOut = (why) => {
    session.signOut();
    setReason(why);
    setKey(null);
  };
  const admin = useAdmin(key, signOut);
  if (!key)
    return (
      <SignIn
        reason={reason}
        onSignedIn={(k) => {
          session.signIn(k);
          setReason(null);
          setKey(k);
        }}
      />
    );
  return (
    <>
      <header>
        <h1>airlock</h1>
        <Nav current={route.page || START_PAGE} admin={admin} />
        <button type="button" onClick={() => signOut(null)}>
          Sign out
        </button>
      </header>
      <main>
        <Page route={route} admin={admin} onKeyRefused={signOut} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app'));
