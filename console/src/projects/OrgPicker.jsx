import { useState } from 'preact/hooks';

// The API cannot list orgs (docs/vault.md "Not yet"), so the admin names
// one; the tab remembers the last one named for the other pages.
const KEY = 'airlock.org';

export function useOrg() {
  const [org, setOrg] = useState(sessionStorage.getItem(KEY) || '');
  const choose = (id) => {
    sessionStorage.setItem(KEY, id);
    setOrg(id);
  };
  return [org, choose];
}

export function OrgPicker({ org, onChoose, label }) {
  const [typed, setTyped] = useState(org);
  const submit = (e) => {
    e.preventDefault();
    onChoose(typed.trim());
  };
  return (
    <form class="org-picker" onSubmit={submit}>
      <label for="org-id">{label}</label>
      <input id="org-id" value={typed} placeholder="acme" onInput={(e) => setTyped(e.currentTarget.value)} />
      <button type="submit">Show</button>
    </form>
  );
}
