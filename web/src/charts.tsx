import { Paper, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * What the app's charts share (docs/web.md "Usage", "Flow analytics"): recharts draws SVG with style
 * attributes only, which the page's CSP allows; each chart is a picture (`role="img"`) whose name
 * summarises it, followed by its figures as a table only a screen reader (and a test) reads.
 * Recharts' own keyboard layer stays off (`accessibilityLayer={false}`): its focusable SVG would sit
 * inside the picture.
 */

/** The theme's colours, as CSS variables. */
export const COLOURS = {
  completed: 'var(--mantine-color-teal-6)',
  failed: 'var(--mantine-color-red-6)',
  invalid: 'var(--mantine-color-orange-5)',
  other: 'var(--mantine-color-gray-5)',
  rate: 'var(--mantine-color-blue-6)',
  second: 'var(--mantine-color-violet-6)',
  waiting: 'var(--mantine-color-yellow-5)',
};

/** Legend entries in the page's text colour (beside their coloured mark), readable on any of them. */
export const legendText = (value: string) => <span style={{ color: 'var(--mantine-color-text)' }}>{value}</span>;

/** `2026-11-29` as "29 Nov" (the API's days are UTC days). */
export function dayLabel(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

/** A figure with its label, a region of its own (named after the label). */
export function Figure({ label, value, note }: { label: string; value: ReactNode; note?: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={label}>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
      {note && (
        <Text size="xs" c="dimmed">
          {note}
        </Text>
      )}
    </Paper>
  );
}

/** A chart as a picture with a summary for its name, followed by its figures as a table only a screen reader (and a test) reads. */
export function Chart({ title, summary, table, children, busy }: { title: string; summary: string; table: ReactNode; children: ReactNode; busy?: boolean }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title} aria-busy={busy || undefined}>
      <Title order={4} size="h5" mb="sm">
        {title}
      </Title>
      <div role="img" aria-label={summary}>
        {children}
      </div>
      <VisuallyHidden>{table}</VisuallyHidden>
    </Paper>
  );
}

/** A table of figures: a header row and body rows of text, named `label`. */
export function FiguresTable({ label, head, rows }: { label: string; head: string[]; rows: Array<Array<string | number>> }) {
  return (
    <Table aria-label={label}>
      <Table.Thead>
        <Table.Tr>
          {head.map((h) => (
            <Table.Th key={h}>{h}</Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row, i) => (
          <Table.Tr key={i}>
            {row.map((cell, j) => (
              <Table.Td key={j}>{cell}</Table.Td>
            ))}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
