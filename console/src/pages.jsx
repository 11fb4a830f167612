// Every page of the console, declared once: the header's navigation and
// the router both read this table. A page shows `list` at /console/{path}
// and `item` at /console/{path}/{id}; `admin` pages need the admin key
// (their routes are the API's admin routes) and are listed only for it.
import { Sandboxes } from './Sandboxes.jsx';
import { Sandbox } from './Sandbox.jsx';
import { Templates } from './Templates.jsx';
import { Template } from './templates/Template.jsx';
import { Secrets } from './Secrets.jsx';
import { Audit } from './Audit.jsx';
import { Metrics } from './Metrics.jsx';
import { Projects } from './Projects.jsx';
import { Project } from './projects/Project.jsx';
import { Nodes } from './Nodes.jsx';
import { Node } from './nodes/Node.jsx';
import { WarmPools } from './WarmPools.jsx';

export const START_PAGE = 'sandboxes';

export const PAGES = [
  { path: 'sandboxes', title: 'Sandboxes', list: Sandboxes, item: Sandbox },
  { path: 'templates', title: 'Templates', list: Templates, item: Template },
  { path: 'secrets', title: 'Secrets', list: Secrets },
  { path: 'audit', title: 'Audit log', list: Audit },
  { path: 'metrics', title: 'Metrics', list: Metrics },
  { path: 'projects', title: 'Projects', list: Projects, item: Project, admin: true },
  { path: 'nodes', title: 'Nodes', list: Nodes, item: Node, admin: true },
  { path: 'warm-pools', title: 'Warm pools', list: WarmPools, admin: true },
];

// The page entry and component for a route; null when there is none.
export function pageFor({ page, id }) {
  const entry = PAGES.find((p) => p.path === (page === '' ? START_PAGE : page));
  const component = entry && (id === undefined ? entry.list : entry.item);
  return component ? { entry, component } : null;
}
