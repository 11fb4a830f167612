// Placeholder while this page is built (issue 20); replaced by its own.
export function Audit() {
  return <h2>Audit</h2>;
}
