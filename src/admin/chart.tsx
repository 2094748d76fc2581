import type { FC } from "hono/jsx";

/**
 * Bar charts drawn by the server as inline SVG (docs/admin.md §3, Home): seen without
 * script, no style attribute (the console's CSP: colours are fill attributes), as wide as
 * their box (width 100 %, height from the viewBox), named by a <title> and described by a
 * <desc>. The page gives the same figures as text beside each chart.
 */

/** One stack of a bar chart, per series a value (bottom first). */
export interface Bar {
  /** What the bar stands for (a day, an hour), shown in its tooltip. */
  label: string;
  values: number[];
}

export interface Series {
  name: string;
  /** A fill colour with at least 3:1 contrast on white (WCAG 1.4.11). */
  fill: string;
}

const SLOT = 10;
const GAP = 2;

/** The largest stack, for the scale (at least 1, so an empty chart draws its baseline only). */
const tallest = (bars: Bar[]) => Math.max(1, ...bars.map((b) => b.values.reduce((s, v) => s + v, 0)));

export const BarChart: FC<{ id: string; title: string; description: string; bars: Bar[]; series: Series[]; height?: number }> = (p) => {
  const height = p.height ?? 60;
  const width = p.bars.length * SLOT;
  const top = tallest(p.bars);
  const unit = (height - 2) / top;
  return (
    <svg
      class="chart"
      role="img"
      aria-labelledby={`${p.id}-title ${p.id}-desc`}
      viewBox={`0 0 ${width} ${height}`}
      width="100%"
      preserveAspectRatio="xMidYMid meet"
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id={`${p.id}-title`}>{p.title}</title>
      <desc id={`${p.id}-desc`}>{p.description}</desc>
      <line x1="0" y1={height - 0.25} x2={width} y2={height - 0.25} stroke="#6b7280" stroke-width="0.5" />
      {p.bars.map((bar, i) => {
        let y = height - 0.5;
        const x = i * SLOT + GAP / 2;
        const tip = `${bar.label}: ${bar.values.map((v, s) => `${v.toLocaleString("en")} ${p.series[s]?.name ?? ""}`.trim()).join(", ")}`;
        return (
          <g>
            <title>{tip}</title>
            {/* The slot's whole height takes the pointer, so a zero day has its tooltip too. */}
            <rect x={i * SLOT} y="0" width={SLOT} height={height} fill="transparent" />
            {bar.values.map((value, s) => {
              if (value <= 0) return null;
              const h = Math.max(1, value * unit);
              y -= h;
              return <rect x={x} y={round(y)} width={SLOT - GAP} height={round(h)} fill={p.series[s]?.fill ?? "#0b57d0"} />;
            })}
          </g>
        );
      })}
    </svg>
  );
};

const round = (n: number) => Math.round(n * 100) / 100;

/** The series' colours, named, for the charts with more than one (a legend in text, not only colour). */
export const Legend: FC<{ series: Series[] }> = ({ series }) => (
  <ul class="legend">
    {series.map((s) => (
      <li>
        <svg viewBox="0 0 10 10" width="10" height="10" aria-hidden="true" focusable="false">
          <rect width="10" height="10" fill={s.fill} />
        </svg>{" "}
        {s.name}
      </li>
    ))}
  </ul>
);
