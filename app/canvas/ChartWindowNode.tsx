// A chart window: bar, line or pie through Chart.js, redrawn when its data changes.
import type { Node, NodeProps } from '@xyflow/react';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PieController, ArcElement, PointElement, Tooltip } from 'chart.js';
import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { ChartWindow } from '../../worker/protocol.ts';
import { useAppStore } from '../store.ts';
import { chartData } from './chart-data.ts';
import { WindowFrame } from './WindowFrame.tsx';

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, PieController, ArcElement, CategoryScale, LinearScale, Legend, Tooltip);

export type ChartWindowNodeType = Node<{ window: ChartWindow }, 'chart'>;

const PALETTE = ['#3357d6', '#e0783a', '#2a9d6f', '#b8467a', '#7a5cc7', '#c9a227', '#3b9bb8', '#8c8c8c'];

export const ChartWindowNode = memo(function ChartWindowNode({ data, selected }: NodeProps<ChartWindowNodeType>) {
  const { window } = data;
  const windows = useAppStore((state) => state.view.windows);
  const input = useMemo(() => chartData(window, windows), [window, windows]);
  const canvas = useRef<HTMLCanvasElement>(null);

  useEffect(() => {
    if (!input.ok || !canvas.current) return;
    const pie = window.chart === 'pie';
    const chart = new Chart(canvas.current, {
      type: window.chart,
      data: {
        labels: input.data.labels,
        datasets: input.data.series.map((series, i) => ({
          label: series.name,
          data: series.values,
          backgroundColor: pie ? input.data.labels.map((_, j) => PALETTE[j % PALETTE.length]!) : PALETTE[i % PALETTE.length]!,
          borderColor: pie ? '#fff' : PALETTE[i % PALETTE.length]!,
        })),
      },
      options: { responsive: true, maintainAspectRatio: false, animation: false, plugins: { legend: { display: pie || input.data.series.length > 1 } } },
    });
    return () => chart.destroy();
  }, [input, window.chart]);

  return (
    <WindowFrame window={window} selected={selected}>
      {input.ok ? (
        <div class="chart-box">
          <canvas ref={canvas} role="img" aria-label={`${window.chart} chart: ${window.title}`} />
        </div>
      ) : (
        <p class="window-problem" role="alert">
          {input.message}
        </p>
      )}
    </WindowFrame>
  );
});
