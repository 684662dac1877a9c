// Chart.js, loaded the first time a chart window opens (it is a quarter of the app's code) and
// registered with only the parts the three chart types use.
import type { Chart as ChartType } from 'chart.js';

let loading: Promise<typeof ChartType> | undefined;

export function loadChart(): Promise<typeof ChartType> {
  loading ??= import('chart.js').then((lib) => {
    const { Chart, BarController, BarElement, LineController, LineElement, PointElement, PieController, ArcElement, CategoryScale, LinearScale, Legend, Tooltip } = lib;
    Chart.register(BarController, BarElement, LineController, LineElement, PointElement, PieController, ArcElement, CategoryScale, LinearScale, Legend, Tooltip);
    return Chart;
  });
  return loading;
}
