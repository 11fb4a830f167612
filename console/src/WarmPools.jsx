// Placeholder while this page is built (issue 20); replaced by its own.
export function WarmPools() {
  return <h2>WarmPools</h2>;
}
