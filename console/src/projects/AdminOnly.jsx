// main.jsx renders an admin page while GET /v1/whoami is still being
// asked (admin null); its calls would be refused (403) for a project
// key, so the page waits for the answer.
export function AdminOnly({ admin, children }) {
  return admin ? children : <p>Loading…</p>;
}
