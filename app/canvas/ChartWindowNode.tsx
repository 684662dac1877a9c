// A chart window: bar, line or pie through Chart.js. A chart of a table follows the table's
// edits live; the chart is updated in place, not rebuilt, so it does not flicker.
import type { NodeProps } from '@xyflow/react';
import type { Chart, ChartConfiguration, ChartOptions } from 'chart.js';
import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ChartType } from '../../protocol/windows.ts';
import { useAppStore } from '../connection/store.ts';
import { chartData, type ChartData } from './chart-data.ts';
import { loadChart } from './chart-lib.ts';
import type { ChartWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

const PALETTE = ['#3357d6', '#e0783a', '#2a9d6f', '#b8467a', '#7a5cc7', '#c9a227', '#3b9bb8', '#8c8c8c'];
/** Screen readers get the numbers as a table; past this many rows, the first ones. */
const TEXT_ROWS = 50;

export const ChartWindowNode = memo(function ChartWindowNode({ data, selected }: NodeProps<ChartWindowNodeType>) {
  const { window } = data;
  const source = window.source;
  // Only the table this chart draws: edits to other windows leave it alone.
  const table = useAppStore((state) => (source.type === 'table' ? state.view.windows.find((w) => w.id === source.table_id) : undefined));
  const input = useMemo(() => chartData(window, table ? [table] : []), [window, table]);

  return (
    <WindowFrame window={window} selected={selected}>
      {input.ok ? (
        <div class="chart-box">
          <ChartCanvas type={window.chart} data={input.data} label={`${window.chart} chart: ${window.title}`} />
          <ChartText data={input.data} title={window.title} />
        </div>
      ) : (
        <p class="window-problem" role="alert">
          {input.message}
        </p>
      )}
    </WindowFrame>
  );
});

function ChartCanvas({ type, data, label }: { type: ChartType; data: ChartData; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  // Chart.js may arrive after the data changed; it is drawn from the newest.
  const latest = useRef(data);
  latest.current = data;

  // One Chart per chart type; a new type needs a new one.
  useEffect(() => {
    let cancelled = false;
    loadChart()
      .then((ChartClass) => {
        if (cancelled || !canvas.current) return;
        chart.current = new ChartClass(canvas.current, { type, data: toDatasets(type, latest.current), options: options(type, latest.current) } as ChartConfiguration);
      })
      .catch((error: unknown) => setFailed(error instanceof Error ? error.message : String(error)));
    return () => {
      cancelled = true;
      chart.current?.destroy();
      chart.current = null;
    };
  }, [type]);

  useEffect(() => {
    if (!chart.current) return;
    chart.current.data = toDatasets(type, data);
    chart.current.options = options(type, data);
    chart.current.update('none');
  }, [data]);

  if (failed) return <p class="window-problem" role="alert">The chart could not be drawn: {failed}</p>;
  return <canvas ref={canvas} role="img" aria-label={label} />;
}

function toDatasets(type: ChartType, data: ChartData) {
  const pie = type === 'pie';
  return {
    labels: data.labels,
    datasets: data.series.map((series, i) => ({
      label: series.name,
      data: series.values,
      backgroundColor: pie ? data.labels.map((_, j) => PALETTE[j % PALETTE.length]!) : PALETTE[i % PALETTE.length]!,
      borderColor: pie ? '#fff' : PALETTE[i % PALETTE.length]!,
    })),
  };
}

function options(type: ChartType, data: ChartData): ChartOptions {
  const money = data.currency ? moneyFormat(data.currency) : null;
  const number = (value: number | string) => (money && typeof value === 'number' ? money.format(value) : String(value));
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false as const,
    plugins: {
      legend: { display: type === 'pie' || data.series.length > 1 },
      tooltip: { callbacks: { label: (item) => `${item.dataset.label ?? item.label}: ${number(item.raw as number)}` } },
    },
    ...(type === 'pie' ? {} : { scales: { y: { ticks: { callback: number } } } }),
  };
}

function moneyFormat(currency: string): Intl.NumberFormat | null {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 0 });
  } catch {
    return null;
  }
}

/** The chart's numbers as a table, for assistive technology. */
function ChartText({ data, title }: { data: ChartData; title: string }) {
  return (
    <table class="visually-hidden">
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">Label</th>
          {data.series.map((series) => (
            <th key={series.name} scope="col">
              {series.name}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {data.labels.slice(0, TEXT_ROWS).map((label, i) => (
          <tr key={i}>
            <th scope="row">{label}</th>
            {data.series.map((series) => (
              <td key={series.name}>{series.values[i] ?? ''}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
