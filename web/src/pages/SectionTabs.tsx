import { Button, Group } from '@mantine/core';
import { Link, useLocation } from 'react-router';

/**
 * The sub-navigation of an area with several pages (Flow, Reporting): a `nav` landmark named after the
 * area, a link per page, the current one marked `aria-current="page"`.
 */
export function SectionTabs({ label, tabs }: { label: string; tabs: Array<[string, string]> }) {
  const { pathname } = useLocation();
  return (
    <Group component="nav" aria-label={label} gap="xs" mb="md">
      {tabs.map(([name, to]) => {
        const current = pathname === to || pathname.startsWith(`${to}/`);
        return (
          <Button key={to} component={Link} to={to} size="xs" variant={current ? 'light' : 'subtle'} aria-current={current ? 'page' : undefined}>
            {name}
          </Button>
        );
      })}
    </Group>
  );
}

/** Flow's pages. */
export const FLOW_TABS: Array<[string, string]> = [
  ['Gates', '/flow/gates'],
  ['Runs', '/flow/runs'],
  ['Analytics', '/flow/analytics'],
];

/** Reporting's pages. */
export const REPORTING_TABS: Array<[string, string]> = [
  ['Datasources', '/reporting/datasources'],
  ['Queries', '/reporting/queries'],
  ['Reports', '/reporting/reports'],
  ['Schedules', '/reporting/schedules'],
  ['Runs', '/reporting/runs'],
  ['Channels', '/reporting/channels'],
  ['Imports', '/reporting/imports'],
];
