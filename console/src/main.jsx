import { render } from 'preact';
import { useState } from 'preact/hooks';
import { session } from './api.js';
import { SignIn } from './SignIn.jsx';
import { Sandboxes } from './Sandboxes.jsx';
import { Sandbox } from './Sandbox.jsx';
import { useRoute } from './router.jsx';
import './style.css';

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
        <button type="button" onClick={() => signOut(null)}>
          Sign out
        </button>
      </header>
      <main>
        {route.page === 'sandbox' ? (
          <Sandbox id={route.id} onKeyRefused={signOut} />
        ) : (
          <Sandboxes onKeyRefused={signOut} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app'));
