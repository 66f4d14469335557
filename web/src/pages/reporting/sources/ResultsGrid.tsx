import { Table, Text } from '@mantine/core';

/** A cell's value as text: null as an empty cell marked "null", objects as JSON. */
function cell(value: unknown): { text: string; empty: boolean } {
  if (value === null || value === undefined) return { text: 'null', empty: true };
  if (typeof value === 'object') return { text: JSON.stringify(value), empty: false };
  return { text: String(value), empty: false };
}

/**
 * Rows as a data grid: a named table with a header per column (its type under the name) and a row per
 * record, scrolling sideways when wide. Reused by the reports' pages (docs/web.md "Reporting").
 */
export function ResultsGrid({ label, columns, rows, maxHeight = 420 }: { label: string; columns: Array<{ name: string; type?: string }>; rows: Array<Record<string, unknown>>; maxHeight?: number }) {
  return (
    <Table.ScrollContainer minWidth={Math.min(columns.length * 140, 1200)} maxHeight={maxHeight}>
      <Table aria-label={label} striped highlightOnHover withTableBorder withColumnBorders stickyHeader>
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) => (
              <Table.Th key={c.name} scope="col">
                {c.name}
                {c.type && (
                  <Text component="span" size="xs" c="dimmed" display="block" fw={400}>
                    {c.type}
                  </Text>
                )}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row, i) => (
            <Table.Tr key={i}>
              {columns.map((c) => {
                const { text, empty } = cell(row[c.name]);
                return (
                  <Table.Td key={c.name} c={empty ? 'dimmed' : undefined} ff={empty ? undefined : 'monospace'} fz="sm">
                    {text}
                  </Table.Td>
                );
              })}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
