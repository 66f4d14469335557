import type * as Echarts from 'echarts';
import Joi from 'joi';
import { AppError } from '../../errors';
import { escapeHtml, getPath, interpolateText } from '../interpolate';
import type { ChartProps } from '../template.types';
import { cssLength, lengthMm, type DataContext, type RenderContext } from './context';
import { dataPath, length } from './props';
import { dataSourceRows } from './table';

/**
 * echarts (3.7 MB of code), loaded when a chart is first drawn: the evaluation workers load the template
 * checks, which import this module, and a worker's first check on a loaded machine waited a minute for it.
 */
const loadEcharts = (): typeof Echarts => require('echarts') as typeof Echarts;

/**
 * Charts (docs/templates.md "chart"): drawn on the server to SVG by Apache ECharts (server-side
 * rendering, no JavaScript in the page) and printed as vector graphics with real text, so axis
 * labels and the legend stay readable and searchable. One row of `dataSource` is one point of each
 * series; rows are charged to the loop budget like a table's, and a chart holds at most MAX_POINTS
 * rows (ERR_LIMIT_007 past either).
 */

const MAX_POINTS = 5_000;
const PALETTE = ['#0b6e4f', '#2f80ed', '#f2994a', '#9b51e0', '#eb5757', '#27ae60', '#56ccf2', '#bdbdbd'];

export const chartProps = Joi.object({
  chartType: Joi.string().valid('bar', 'line', 'pie', 'area').required(),
  dataSource: dataPath.required(),
  x: Joi.string().trim().min(1).max(500).required(),
  series: Joi.array()
    .min(1)
    .max(8)
    .items(Joi.object({ field: Joi.string().trim().min(1).max(500).required(), label: Joi.string().allow('').max(200) }))
    .required(),
  title: Joi.string().allow('').max(500),
  width: length,
  /** Millimetres. */
  height: Joi.number().min(20).max(250).default(80),
});

export interface ChartData {
  categories: string[];
  series: Array<{ name: string; values: Array<number | null> }>;
}

const toNumber = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

/** The chart's points: categories from `x`, one list of numbers per series (not a number: a gap). */
export function chartData(id: string, p: ChartProps, ctx: DataContext): ChartData {
  const rows = dataSourceRows(p.dataSource, ctx.scope);
  if (rows.length > MAX_POINTS) throw new AppError('ERR_LIMIT_007', `Chart '${id}' has ${rows.length} points; at most ${MAX_POINTS}`, { componentId: id, limit: MAX_POINTS });
  ctx.budget.consume(rows.length, id);
  return {
    categories: rows.map((r) => {
      const v = getPath(r, p.x);
      return v instanceof Date ? v.toISOString().slice(0, 10) : v === null || v === undefined ? '' : String(v);
    }),
    series: p.series.map((s) => ({ name: interpolateText(s.label || s.field, ctx.scope, ctx.format), values: rows.map((r) => toNumber(getPath(r, s.field))) })),
  };
}

const MM_PX = 96 / 25.4;

function option(p: ChartProps, data: ChartData, title: string): Echarts.EChartsCoreOption {
  const base = { animation: false, color: PALETTE, textStyle: { fontFamily: 'Liberation Sans, DejaVu Sans, sans-serif' }, title: title ? { text: title, left: 'center', textStyle: { fontSize: 14 } } : undefined };
  const legend = { bottom: 0, type: 'plain' as const };
  if (p.chartType === 'pie') {
    const [first] = data.series;
    return {
      ...base,
      legend,
      series: [
        {
          type: 'pie',
          radius: '48%',
          center: ['50%', title ? '50%' : '44%'],
          name: first.name,
          // Whole labels on short lines: a narrow column must not cut them ("Fe…").
          label: { formatter: '{b}: {d}%', overflow: 'none' },
          labelLine: { length: 6, length2: 6 },
          data: data.categories.map((name, i) => ({ name, value: first.values[i] ?? 0 })),
        },
      ],
    };
  }
  return {
    ...base,
    legend,
    grid: { left: 56, right: 24, top: title ? 48 : 24, bottom: 56, containLabel: true },
    xAxis: { type: 'category', data: data.categories, axisLabel: { hideOverlap: true } },
    yAxis: { type: 'value' },
    series: data.series.map((s) => ({
      type: p.chartType === 'bar' ? 'bar' : 'line',
      name: s.name,
      data: s.values,
      showSymbol: data.categories.length <= 50,
      ...(p.chartType === 'area' ? { areaStyle: { opacity: 0.25 } } : {}),
    })),
  };
}

/** The chart of points already read (a workbook writes them as a table too) as an SVG document string, `widthPx` wide and its `height` tall. */
export function drawChartSvg(p: ChartProps, data: ChartData, ctx: DataContext, widthPx: number): string {
  const heightPx = Math.round((p.height ?? 80) * MM_PX);
  const chart = loadEcharts().init(null, null, { renderer: 'svg', ssr: true, width: widthPx, height: heightPx });
  try {
    chart.setOption(option(p, data, p.title ? interpolateText(p.title, ctx.scope, ctx.format) : ''));
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/** The chart as an SVG document string, `widthPx` wide. */
const chartSvg = (id: string, p: ChartProps, ctx: DataContext, widthPx: number): string => drawChartSvg(p, chartData(id, p, ctx), ctx, widthPx);

export function chartHtml(id: string, p: ChartProps, ctx: RenderContext): string {
  // Drawn for the width it will be printed at (its own, or its column's), so its text keeps its size.
  const widthMm = lengthMm(p.width) ?? (typeof p.width === 'string' && p.width.endsWith('%') ? (ctx.widthMm * Number(p.width.slice(0, -1))) / 100 : ctx.widthMm);
  const svg = chartSvg(id, p, ctx, Math.max(120, Math.round(widthMm * MM_PX)));
  const label = p.title ? ` aria-label="${escapeHtml(interpolateText(p.title, ctx.scope, ctx.format))}"` : '';
  return `<div class="fw-chart"${label} style="width:${cssLength(p.width, '100%')}">${svg}</div>`;
}
