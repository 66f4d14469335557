import { Tabs, Text } from '@mantine/core';
import type { CSSProperties } from 'react';
import type { paths } from '@formwork/client';
import './grid.css';

export type Grid = paths['/api/templates/{id}/preview/grid']['post']['responses'][200]['content']['application/json'];
type Sheet = Grid['sheets'][number];
type Cell = Sheet['rows'][number]['cells'][number];

/** Excel's column letters: 1 → A, 27 → AA. */
function columnName(n: number): string {
  let name = '';
  for (let rest = n; rest > 0; rest = Math.floor((rest - 1) / 26)) name = String.fromCharCode(65 + ((rest - 1) % 26)) + name;
  return name;
}

/** Excel's width unit is about one digit (7 px at 11 pt Calibri) plus padding; its default is 8.43. */
const widthPx = (chars: number | null) => Math.round((chars ?? 8.43) * 7 + 5);

function cellStyle(cell: Cell): CSSProperties {
  return {
    fontWeight: cell.bold ? 700 : undefined,
    fontStyle: cell.italic ? 'italic' : undefined,
    color: cell.color,
    background: cell.fill,
    textAlign: cell.align,
  };
}

function SheetTable({ sheet }: { sheet: Sheet }) {
  const columns = sheet.columns.map((width, i) => ({ n: i + 1, width }));
  return (
    <div className="fw-grid-scroll">
      <table className="fw-grid" aria-label={`Sheet ${sheet.name}`}>
        <colgroup>
          <col className="fw-grid-rownum" />
          {columns.map((c) => (
            <col key={c.n} style={{ width: widthPx(c.width) }} />
          ))}
        </colgroup>
        <thead>
          <tr>
            <td aria-hidden="true" />
            {columns.map((c) => (
              <th key={c.n} scope="col">
                {columnName(c.n)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sheet.rows.map((row) => {
            const byColumn = new Map(row.cells.map((cell) => [cell.column, cell]));
            return (
              <tr key={row.row} style={row.height ? { height: Math.round((row.height * 4) / 3) } : undefined}>
                <th scope="row">{row.row}</th>
                {columns.map(({ n }) => {
                  const cell = byColumn.get(n);
                  return cell ? (
                    <td key={n} style={cellStyle(cell)}>
                      {cell.text}
                    </td>
                  ) : (
                    <td key={n} />
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The workbook an `excel` template makes, as the API reads it back (POST …/preview/grid): one tab
 * per sheet, column letters and row numbers, values as their formats show them, with fonts, fills
 * and widths. Only the first 500 rows and 50 columns come; a note says when there are more.
 */
export default function WorkbookGrid({ grid }: { grid: Grid }) {
  const sheets = grid.sheets;
  if (sheets.length === 0) return <Text p="sm">The workbook has no sheets.</Text>;
  const more = (sheet: Sheet) =>
    sheet.truncated && (
      <Text size="sm" c="dimmed" p="xs">
        The sheet has {sheet.rowCount} rows and {sheet.columnCount} columns; the first {sheet.rows.length} rows and {sheet.columns.length} columns are shown.
      </Text>
    );
  if (sheets.length === 1) {
    return (
      <div>
        <SheetTable sheet={sheets[0]} />
        {more(sheets[0])}
      </div>
    );
  }
  return (
    <Tabs defaultValue="0" keepMounted={false}>
      <Tabs.List aria-label="Sheets">
        {sheets.map((sheet, i) => (
          <Tabs.Tab key={i} value={String(i)}>
            {sheet.name}
          </Tabs.Tab>
        ))}
      </Tabs.List>
      {sheets.map((sheet, i) => (
        <Tabs.Panel key={i} value={String(i)}>
          <SheetTable sheet={sheet} />
          {more(sheet)}
        </Tabs.Panel>
      ))}
      {grid.truncated && (
        <Text size="sm" c="dimmed" p="xs">
          Only the first {sheets.length} sheets are shown.
        </Text>
      )}
    </Tabs>
  );
}
