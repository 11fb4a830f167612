// Placeholder while this page is built (issue 20); replaced by its own.
export function Metrics() {
  return <h2>Metrics</h2>;
}
