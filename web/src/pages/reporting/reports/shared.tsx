import { Badge } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { components } from '@formwork/client';
import { api, must } from '../../../api';
import { useSession } from '../../../session';

export type Report = components['schemas']['Report'];
export type Schedule = components['schemas']['ReportSchedule'];
export type Channel = components['schemas']['ReportChannel'];
export type Run = components['schemas']['ReportRun'];
export type Delivery = components['schemas']['ReportDelivery'];
export type Job = components['schemas']['ReportJob'];
export type ReportImport = components['schemas']['ReportImport'];

/** What these pages read of a query object and a datasource (the other Reporting pages own them). */
export interface QueryItem {
  id: string;
  name: string;
  latestVersion: number;
  parameters?: Array<{ name: string }>;
}
export interface DatasourceItem {
  id: string;
  name: string;
  kind: string;
}

/** Members, admins and owners write; viewers read. */
export function useCanWrite(): { canWrite: boolean; isAdmin: boolean } {
  const { team } = useSession();
  const role = team?.role;
  return { canWrite: role === 'member' || role === 'admin' || role === 'owner', isAdmin: role === 'admin' || role === 'owner' };
}

/** The project's reports (first 100), for names and choices. */
export function useReports() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['reporting-reports', team?.id, 'all'],
    queryFn: () => must(api.GET('/api/reporting/reports', { params: { query: { limit: 100, page: 1, sortBy: 'name', sortOrder: 'asc' } } })),
    enabled: !!team,
  });
}

/** The project's query objects (first 100). */
export function useQueryObjects() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['reporting-queries', team?.id, 'all'],
    queryFn: async () => (await must(api.GET('/api/reporting/queries', { params: { query: { limit: 100, page: 1 } } }))).data as unknown as QueryItem[],
    enabled: !!team,
  });
}

/** The project's datasources (first 100). */
export function useDatasources() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['reporting-datasources', team?.id, 'all'],
    queryFn: async () => (await must(api.GET('/api/reporting/datasources', { params: { query: { limit: 100, page: 1 } } }))).data as unknown as DatasourceItem[],
    enabled: !!team,
  });
}

/** The project's channels (first 100). */
export function useChannels() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['reporting-channels', team?.id],
    queryFn: () => must(api.GET('/api/reporting/channels', { params: { query: { limit: 100, page: 1 } } })),
    enabled: !!team,
  });
}

const COLOURS: Record<string, string> = {
  queued: 'gray',
  pending: 'gray',
  running: 'blue',
  rendering: 'blue',
  delivering: 'blue',
  completed: 'green',
  failed: 'red',
  cancelled: 'orange',
  skipped: 'yellow',
  active: 'green',
  paused: 'gray',
};

/** A status as its word, coloured. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLOURS[status] ?? 'gray'} variant="light">
      {status}
    </Badge>
  );
}

/** Whether a run (or delivery) has ended: nothing more changes by itself. */
export const ended = (status: string) => ['completed', 'failed', 'cancelled', 'skipped'].includes(status);

/** An instant as a date and time in a zone ("Mon 30 Nov 2026, 07:30"), or in the browser's zone. */
export function inZone(iso: string, timeZone?: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}
