// Placeholder while this page is built (issue 20); replaced by its own.
export function Secrets() {
  return <h2>Secrets</h2>;
}
