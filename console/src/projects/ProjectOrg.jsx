import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { when } from '../time.js';

// Puts the project into an org (PUT …/org), whose secrets then apply to
// it. The API has no call that says a project's org, so only the answer
// to this page's own PUT is shown; "Create org" makes one first (POST /v1/orgs).
export function ProjectOrg({ project, onKeyRefused }) {
  const [org, setOrg] = useState('');
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);

  async function send(e, method, path, body) {
    e.preventDefault();
    setError(null);
    setAnswer(null);
    try {
      setAnswer(await call(method, path, body));
    } catch (err) {
      if (err.status === 401) onKeyRefused(err);
      else setError(err);
    }
  }

  const join = (e) =>
    send(e, 'PUT', '/v1/projects/' + encodeURIComponent(project) + '/org', { org_id: org.trim() });
  const createOrg = (e) => send(e, 'POST', '/v1/orgs', { org_id: org.trim() });

  return (
    <section aria-labelledby="org-title">
      <h3 id="org-title">Org</h3>
      <form onSubmit={join} aria-label="Org">
        <label for="project-org">Org id</label>
        <input id="project-org" value={org} required placeholder="acme" onInput={(e) => setOrg(e.currentTarget.value)} />
        <button type="submit">Put into org</button>
        <button type="button" onClick={createOrg}>
          Create org
        </button>
      </form>
      {answer && (
        <p role="status">
          {answer.project_id
            ? `In org ${answer.org_id} (org created ${when(answer.created_at)}).`
            : `Org ${answer.org_id} created.`}
        </p>
      )}
      <ErrorLine error={error} />
    </section>
  );
}
