// The web console's admin pages (Nodes, one node, Warm pools) and its
// Metrics page, for test_console.py (console_lib.js says the
// environment). Also: CP_NODE_HEARTBEAT, cp_node_heartbeat, which makes
// the stack's second node (cp-node-b: no vmhost, no room) live, so that
// the real node may be drained (the last live active node may not be)
// while no create can go anywhere. One sandbox is created, and one
// warm-pool VM made.
'use strict';
const { spawn } = require('child_process');
const { BOOT_MS, check, step, expectSoon, elsewhere, signIn, run } = require('./console_lib.js');

const NODE = 'cp-node'; // cp_nats.h: CP_NODE_ID, CP_OTHER_NODE_ID
const OTHER = 'cp-node-b';

// The second node's heartbeats, once the first is sent.
function startOtherNode() {
  const beat = spawn(process.env.CP_NODE_HEARTBEAT, [OTHER, '0', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    beat.stdout.once('data', () => resolve(beat));
    beat.once('error', reject);
    beat.once('exit', (code) => reject(new Error('cp_node_heartbeat exited with ' + code)));
  });
}

async function confirmed(page, verb) {
  await page.getByRole('button', { name: verb, exact: true }).click();
  await page.getByRole('button', { name: `${verb} ${NODE}` }).click();
}

// Nodes lists the node; another one arriving shows up without a reload;
// on the node's page Drain and Undrain (confirmed) change its state, and
// a create meanwhile is refused; an unknown node shows the API's 404.
async function checkNodes(page, t, nav) {
  await nav.getByRole('link', { name: 'Nodes', exact: true }).click();
  const state = (id) => page.locator(`tr[data-id="${id}"] td.state`);
  await expectSoon('Nodes lists the stack\'s node, active', () =>
    state(NODE).filter({ hasText: /^active$/ }).waitFor());
  await expectSoon('the table says how old it is', () =>
    page.getByText(/^updated \d+s ago$/).waitFor());
  const other = await startOtherNode();
  try {
    await expectSoon('a second node arrives, live and active, without a reload', () =>
      state(OTHER).filter({ hasText: /^active$/ }).waitFor());
    await step(page, '1-nodes');

    await page.getByRole('link', { name: NODE, exact: true }).click();
    await expectSoon('the node\'s page opens from its row', () =>
      page.getByRole('heading', { name: 'Node ' + NODE }).waitFor());
    const shown = page.locator('dd.state');
    await page.getByRole('button', { name: 'Drain', exact: true }).click();
    await step(page, '2-drain-confirm');
    await page.getByRole('button', { name: 'Drain ' + NODE }).click();
    await expectSoon('Drain, confirmed, makes it draining (drained: it held nothing)', () =>
      shown.filter({ hasText: /^drain(ing|ed)$/ }).waitFor());
    await step(page, '3-drained');
    const res = await elsewhere('POST', '/v1/sandboxes', '{}');
    const { error } = await res.json();
    check(res.status === 503 && error.code === 'unavailable' &&
          error.message.includes('no live node has room'),
          `meanwhile a create is refused (${res.status} ${error.code}: ${error.message})`);
    await confirmed(page, 'Undrain');
    await expectSoon('Undrain, confirmed, makes it active again', () =>
      shown.filter({ hasText: /^active$/ }).waitFor());
  } finally {
    other.kill('SIGTERM');
  }
  await step(page, '4-undrained');

  t.allow(/404/);
  await page.goto(process.env.CONSOLE_URL + 'nodes/no-such-node');
  await expectSoon('an unknown node shows the API\'s 404', () =>
    page.getByRole('alert').filter({ hasText: /^not_found: .*no-such-node/ }).waitFor());
  await nav.getByRole('link', { name: 'Warm pools' }).click();
  t.allow(null);
}

// The default template's pool: min 1 fills the node's pool (followed by
// the page), max below min is the API's 400, and the old min comes back.
async function checkWarmPools(page, t) {
  const pool = page.getByRole('region', { name: 'default', exact: true });
  await expectSoon('Warm pools shows the default template', () => pool.waitFor());
  const min = pool.getByLabel('Min');
  const max = pool.getByLabel('Max');
  const [minWas, maxWas] = [await min.inputValue(), await max.inputValue()];
  const save = () => pool.getByRole('button', { name: 'Save' }).click();
  await min.fill('1');
  await save();
  await expectSoon('Save stores min 1, as the API answers', () =>
    pool.locator('.stored').filter({ hasText: 'min 1,' }).waitFor());
  await expectSoon('the node\'s pool fills to 1 ready VM, followed live', () =>
    pool.locator(`tr[data-node="${NODE}"] td.ready`).filter({ hasText: /^[1-9]/ })
      .waitFor({ timeout: BOOT_MS }));
  await step(page, '5-warm-pool');

  t.allow(/400/);
  await min.fill('5');
  await max.fill('2');
  await save();
  await expectSoon('max below min shows the API\'s 400', () =>
    pool.getByRole('alert').filter({ hasText: 'invalid_argument: target: 5 is above max 2' })
      .waitFor());
  await step(page, '6-warm-pool-refused');
  t.allow(null);

  // Never set (the API's null) cannot be stored again: 0 is the stack's
  // vmhost's own floor (no --warm-pool).
  await min.fill(minWas || '0');
  await max.fill(maxWas);
  await save();
  await expectSoon(`min is back to ${minWas || '0'}`, () =>
    pool.locator('.stored').filter({ hasText: `min ${minWas || '0'},` }).waitFor());
}

// The three charts; a sandbox created (and deleted) through the API is
// counted by the creates chart and timed by the latency chart.
async function checkMetrics(page, nav) {
  await nav.getByRole('link', { name: 'Metrics' }).click();
  const current = (name) => page.getByRole('figure', { name }).locator('.current');
  for (const name of ['Creates per minute', 'Create latency', 'Live sandboxes'])
    await expectSoon(`Metrics shows the chart "${name}"`, () =>
      page.getByRole('figure', { name }).locator('svg').waitFor());
  await expectSoon('a second sample comes', () =>
    current('Creates per minute').filter({ hasText: / in the last / }).waitFor());
  const res = await elsewhere('POST', '/v1/sandboxes', '{}');
  const sandbox = await res.json();
  check(res.status === 201, `a sandbox created through the API (${res.status})`);
  const gone = await elsewhere('DELETE', '/v1/sandboxes/' + sandbox.id);
  check(gone.status === 204, `and deleted (${gone.status})`);
  await expectSoon('the creates chart counts it', () =>
    current('Creates per minute').filter({ hasText: /^[1-9]\d* creates? in the last/ }).waitFor());
  await expectSoon('the latency chart says its median and p90', () =>
    current('Create latency').filter({ hasText: /^median [\d.]+ m?s, p90 [\d.]+ m?s \(/ })
      .waitFor());
  await expectSoon('the live sandboxes chart says a count', () =>
    current('Live sandboxes').filter({ hasText: /^\d+ running$/ }).waitFor());
  await step(page, '7-metrics');
  await page.setViewportSize({ width: 360, height: 700 });
  await step(page, '8-metrics-narrow');
  await nav.getByRole('link', { name: 'Nodes', exact: true }).click();
  await expectSoon('in a narrow window the node is still listed', () =>
    page.locator(`tr[data-id="${NODE}"]`).waitFor({ state: 'visible' }));
  await step(page, '9-nodes-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });
}

run(async (page, t) => {
  await signIn(page, process.env.AIRLOCK_ADMIN_KEY);
  const nav = page.getByRole('navigation', { name: 'Pages' });
  await checkNodes(page, t, nav);
  await checkWarmPools(page, t);
  await checkMetrics(page, nav);

  // A project key: no admin pages, and their address says why.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page);
  await page.goto(process.env.CONSOLE_URL + 'nodes');
  await expectSoon('as a project key, /console/nodes says it needs the admin key', () =>
    page.getByRole('alert').filter({ hasText: 'needs the admin key' }).waitFor());
  check(await nav.getByRole('link', { name: 'Nodes', exact: true }).count() === 0 &&
        await nav.getByRole('link', { name: 'Warm pools' }).count() === 0 &&
        await nav.getByRole('link', { name: 'Metrics' }).count() === 1,
        'its navigation has Metrics but no Nodes or Warm pools');
  await nav.getByRole('link', { name: 'Metrics' }).click();
  await expectSoon('its Metrics counts the running sandboxes of its project', () =>
    page.getByText('Sandboxes running in this key’s project').waitFor());
  await step(page, '10-project-key');
});
