// An admin page asks nothing until GET /v1/whoami has said the key is the
// admin key (main.jsx passes admin null while asking, and refuses the page
// itself to a project key): a project key never sees a 403 from it.
export function adminPage(Page) {
  return (props) => (props.admin ? <Page {...props} /> : <p>Checking the key…</p>);
}
