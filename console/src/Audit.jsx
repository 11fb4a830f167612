import { AuditLog } from './audit/AuditLog.jsx';
import { OrgPicker, useOrg } from './projects/OrgPicker.jsx';
import './audit/audit.css';

// vault's append-only log of the key's project (every secret change and
// injection), and for the admin key an org's own changes by its id.
export function Audit({ admin, onKeyRefused }) {
  const [org, setOrg] = useOrg();
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <AuditLog path="/v1/audit" bySandbox idPrefix="audit-" onKeyRefused={onKeyRefused} />
      {admin && (
        <section aria-labelledby="org-audit-title">
          <h3 id="org-audit-title">Org audit log</h3>
          <OrgPicker org={org} onChoose={setOrg} label="Org id" />
          {org && (
            <AuditLog key={org} path={'/v1/orgs/' + encodeURIComponent(org) + '/audit'}
                      idPrefix="org-audit-" onKeyRefused={onKeyRefused} />
          )}
        </section>
      )}
    </section>
  );
}
