import { Alert, Center, Loader } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { paths } from '@formwork/client';
import { must } from '../../../api';
import { dayLabel } from '../../../charts';
import { useSession } from '../../../session';

/** The answer of a GET operation, as the typed client has it. */
export type Answer<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;

export type Period = '7d' | '30d' | '90d';
export type Granularity = 'day' | 'week' | 'month';

/** What the controls chose (docs/flow.md "Analytics": the period, the bucket size, one gate or all). */
export interface Filters {
  period: Period;
  granularity: Granularity;
  gateId?: string;
}

export const PERIOD_DAYS: Record<Period, number> = { '7d': 7, '30d': 30, '90d': 90 };

/**
 * One analytics answer for the page, read again when its key (the project and the filters it takes)
 * changes; the previous answer stays shown while the next one arrives (`busy` meanwhile).
 */
export function useAnswer<T>(key: unknown[], read: () => Promise<{ data?: T; error?: unknown }>) {
  const { team } = useSession();
  const query = useQuery({ queryKey: ['flow-analytics', team?.id, ...key], queryFn: () => must(read()), enabled: !!team, placeholderData: keepPreviousData });
  return { data: query.data, error: query.error, busy: query.isFetching && query.isPlaceholderData };
}

/** The answer's content, a loader before it, or the API's message. */
export function Shown<T>({ answer, children }: { answer: { data?: T; error: Error | null }; children: (data: T) => ReactNode }) {
  if (answer.error) {
    return (
      <Alert color="red" role="alert">
        {answer.error.message}
      </Alert>
    );
  }
  if (answer.data === undefined) {
    return (
      <Center p="md">
        <Loader size="sm" aria-label="Loading" />
      </Center>
    );
  }
  return <>{children(answer.data)}</>;
}

/** A rate of the API, a percentage 0–100, as "57.1%" or "80%"; "—" when there is nothing to divide by (null). */
export function rate(percent: number | null | undefined): string {
  if (percent === null || percent === undefined) return '—';
  return percentage(percent);
}

/** A percentage 0–100 as "66.7%" or "80%" (one decimal at most), as the Usage page writes it. */
export function percentage(n: number): string {
  const rounded = Math.round(n * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded : rounded.toFixed(1)}%`;
}

/** Milliseconds in words a person reads at a glance: "850 ms", "4.2 s", "3 min 20 s", "2 h 5 min", "1 d 3 h"; "—" for none. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Math.round(s * 10) / 10} s`;
  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) => (small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`);
  const total = Math.round(s);
  if (total < 3600) return pair(Math.floor(total / 60), 'min', total % 60, 's');
  const minutes = Math.round(total / 60);
  if (minutes < 24 * 60) return pair(Math.floor(minutes / 60), 'h', minutes % 60, 'min');
  const hours = Math.round(minutes / 60);
  return pair(Math.floor(hours / 24), 'd', hours % 24, 'h');
}

/** US dollars: "$29", "$0.02", "$0.005" (a price per run keeps its third decimal). */
export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 0.01 && n > 0) return `$${n}`;
  return `$${n.toLocaleString('en', Number.isInteger(n) ? {} : { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A count or "Unlimited" (null limits). */
export const limit = (n: number | null) => (n === null ? 'Unlimited' : n.toLocaleString('en'));

/** A bucket's start (`YYYY-MM-DD`, UTC) as the chart's axis shows it: "29 Nov", "Week of 23 Nov", "Nov 2026". */
export function bucketLabel(start: string, granularity: Granularity): string {
  if (granularity === 'day') return dayLabel(start);
  if (granularity === 'week') return `Week of ${dayLabel(start)}`;
  return new Date(`${start}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
}

/** A moment as a person reads it, in their time zone. */
export const when = (iso: string | null) => (iso === null ? '—' : new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));

/** The bucket with the most of `of`, for a chart's summary ("most on 29 Nov (6)", "most in Week of 23 Nov (6)"). */
export function busiest<T extends { start: string }>(buckets: T[], of: (b: T) => number, granularity: Granularity): string {
  const top = buckets.reduce<T | undefined>((a, b) => (a === undefined || of(b) > of(a) ? b : a), undefined);
  return top && of(top) > 0 ? `, most ${granularity === 'day' ? 'on' : 'in'} ${bucketLabel(top.start, granularity)} (${of(top)})` : '';
}

/** Words for a bucket size, for summaries. */
export const BUCKET_WORDS: Record<Granularity, [string, string]> = { day: ['day', 'days'], week: ['week', 'weeks'], month: ['month', 'months'] };

/** A badge in a table cell keeps its whole word on a narrow screen (the cell grows; the table scrolls). */
export const WHOLE = { minWidth: 'max-content' };
