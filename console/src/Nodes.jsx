// Placeholder while this page is built (issue 20); replaced by its own.
export function Nodes() {
  return <h2>Nodes</h2>;
}
