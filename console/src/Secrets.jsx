import { OrgPicker, useOrg } from './projects/OrgPicker.jsx';
import { Byok } from './secrets/Byok.jsx';
import { SecretsSection } from './secrets/SecretsSection.jsx';
import './secrets/secrets.css';

const enc = encodeURIComponent;

// A project key deletes its project's and its sandboxes' secrets; its
// org's are the admin's to delete (under the org, below).
function projectDeletePath(s) {
  if (s.scope === 'org') return null;
  const query = s.scope === 'sandbox' ? '?sandbox_id=' + enc(s.sandbox_id) : '';
  return '/v1/secrets/' + enc(s.name) + query;
}

// The key's project's secrets (all scopes, its org's too), BYOK lock and
// unlock, and for the admin key an org's secrets by its id.
export function Secrets({ admin, onKeyRefused }) {
  const [org, setOrg] = useOrg();
  const orgPath = '/v1/orgs/' + enc(org) + '/secrets';
  return (
    <section aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p class="hint">
        Egress injects a secret into its sandboxes' requests to the bound hosts; the value never
        enters a sandbox, and the API never gives it back.
      </p>
      <SecretsSection path="/v1/secrets" deletePath={projectDeletePath} onKeyRefused={onKeyRefused} />
      <Byok onKeyRefused={onKeyRefused} />
      {admin && (
        <section aria-labelledby="org-secrets-title">
          <h3 id="org-secrets-title">Org secrets</h3>
          <p class="hint">Injected for every project of the org that has no binding of its own for the host.</p>
          <OrgPicker org={org} onChoose={setOrg} label="Org id" />
          {org && (
            <SecretsSection key={org} path={orgPath} org
                            deletePath={(s) => orgPath + '/' + enc(s.name)} onKeyRefused={onKeyRefused} />
          )}
        </section>
      )}
    </section>
  );
}
