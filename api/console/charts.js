// Charts of the console, drawn as SVG at the pixel width of their box (so
// axis labels keep their CSS size on a phone) and drawn again when that
// width changes. Lines are strokes, never filled areas; a slot without a
// value (a minute without searches or matches has no bucket) is a gap in
// the line, never joined across.
import { el, fill, fmt, svg } from "./dom.js";

const H = 220, PAD = { l: 52, r: 14, t: 12, b: 28 };
const FIRST_WIDTH = 560;

const observer = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const box = entry.target;
    const width = Math.floor(entry.contentRect.width);
    if (width > 0 && width !== box.drawnWidth) draw(box, width);
  }
});
function draw(box, width) {
  box.drawnWidth = width;
  fill(box, box.drawChart(width));
}
/** A box that draws `chart(width)` and draws it again when its width changes. */
function plot(chart) {
  const box = el("div", { class: "plot" });
  box.drawChart = chart;
  draw(box, FIRST_WIDTH);
  observer.observe(box);
  return box;
}
/** Stops redrawing the charts inside `node` (it is being replaced). */
export function forget(node) {
  for (const box of node.querySelectorAll(".plot")) observer.unobserve(box);
}
/** Stops redrawing every chart (the page is being left). */
export function forgetAll() { observer.disconnect(); }

/** A figure: caption, the chart (or a note) and a legend of its series' names. */
export function figure(caption, chart, legend) {
  return el("figure", {}, el("figcaption", {}, caption), chart,
    legend ? el("ul", { class: "legend" }, legend.map((name, i) => el("li", { class: "k" + i }, name))) : null);
}

/**
 * Ticks of a value axis from 0 to at least `max`: a step of 1, 2 or 5 times
 * a power of ten, at most 5 steps; `integer` keeps the step whole (counts).
 */
export function ticks(max, integer) {
  const top = max > 0 ? max : 1;
  let step = Math.pow(10, Math.floor(Math.log10(top / 5)));
  for (const m of [1, 2, 5, 10]) if (top / (step * m) <= 5) { step *= m; break; }
  if (integer) step = Math.max(1, Math.round(step));
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  const count = Math.ceil(top / step - 1e-9);
  const values = [];
  for (let k = 0; k <= count; k++) values.push(Number((k * step).toFixed(digits)));
  return { top: values[values.length - 1], values, digits };
}
function frame(width, description, axis, slots) {
  // data-slots and data-plot-width tell a reader (the browser test) where each slot is.
  const root = svg("svg", { class: "chart", width, height: H, viewBox: "0 0 " + width + " " + H, role: "img", "aria-label": description,
    "data-slots": slots, "data-plot-width": width - PAD.l - PAD.r });
  for (const v of axis.values) {
    const y = PAD.t + (H - PAD.t - PAD.b) * (1 - v / axis.top);
    root.append(svg("line", { class: "axis", x1: PAD.l, x2: width - PAD.r, y1: y, y2: y }),
      svg("text", { class: "tick-y", x: PAD.l - 6, y: y + 4, "text-anchor": "end" }, v.toFixed(axis.digits)));
  }
  return root;
}
const finite = (values) => values.filter((v) => typeof v === "number" && isFinite(v));

/** Bars: one per label, one colour per series; `integer` for counts. */
export function barChart(labels, series, description, integer) {
  return plot((width) => {
    const axis = ticks(Math.max(0, ...series.flatMap((s) => finite(s.values))), integer);
    const root = frame(width, description, axis, labels.length);
    const slot = (width - PAD.l - PAD.r) / Math.max(1, labels.length);
    const bw = Math.max(1, slot * 0.8 / series.length);
    const widest = Math.max(1, ...labels.map((l) => String(l).length)) * 7 + 10;
    const step = Math.max(1, Math.ceil(widest / slot));
    labels.forEach((label, i) => {
      series.forEach((s, k) => {
        const v = s.values[i] || 0;
        const h = (H - PAD.t - PAD.b) * v / axis.top;
        root.append(svg("rect", { class: "bar s" + k, x: PAD.l + i * slot + slot * 0.1 + k * bw, y: H - PAD.b - h, width: bw, height: h }, svg("title", {}, label + ": " + fmt(v))));
      });
      if (i % step === 0) root.append(svg("text", { x: PAD.l + i * slot + slot / 2, y: H - PAD.b + 16, "text-anchor": "middle" }, label));
    });
    return root;
  });
}

/** The path of one series: a move at the first value and after each gap (null), a line to each next value. */
export function linePath(xs, values, X, Y) {
  let d = "", open = false;
  xs.forEach((x, i) => {
    const v = values[i];
    if (typeof v !== "number" || !isFinite(v)) { open = false; return; }
    d += (open ? "L" : "M") + X(x).toFixed(1) + "," + Y(v).toFixed(1);
    open = true;
  });
  return d;
}

/**
 * Lines over time. `xs` are the start times (ms) of every slot of the range,
 * empty ones included; each series' `values` are aligned with them, `null`
 * where the slot has no value (a gap). `integer` for counts.
 */
export function lineChart(xs, series, description, integer, names) {
  // The values in words, for those who do not see the lines: each
  // series' latest value and its highest over the range.
  const said = series.map((s, k) => {
    const values = finite(s.values);
    if (!values.length) return null;
    const name = names && names[k] ? names[k] + ": " : "";
    return name + "latest " + fmt(values[values.length - 1]) + ", highest " + fmt(Math.max(...values));
  }).filter(Boolean);
  const label = said.length ? description + ". " + said.join("; ") + "." : description + ". No values in this range.";
  return plot((width) => {
    const axis = ticks(Math.max(0, ...series.flatMap((s) => finite(s.values))), integer);
    const root = frame(width, label, axis, xs.length);
    const t0 = xs[0], t1 = Math.max(xs[xs.length - 1], t0 + 1);
    const X = (t) => PAD.l + (width - PAD.l - PAD.r) * (t - t0) / (t1 - t0);
    const Y = (v) => H - PAD.b - (H - PAD.t - PAD.b) * v / axis.top;
    series.forEach((s, k) => {
      const d = linePath(xs, s.values, X, Y);
      if (d) root.append(svg("path", { class: "line s" + k, d }));
      // A value alone between gaps is a line of no length: mark it.
      s.values.forEach((v, i) => {
        const alone = typeof v === "number" && typeof s.values[i - 1] !== "number" && typeof s.values[i + 1] !== "number";
        if (alone) root.append(svg("circle", { class: "dot s" + k, cx: X(xs[i]).toFixed(1), cy: Y(v).toFixed(1), r: 3 }));
      });
    });
    const labels = Math.max(2, Math.min(5, Math.floor((width - PAD.l - PAD.r) / 90) + 1));
    const long = t1 - t0 > 2 * 86400e3;
    for (let k = 0; k < labels; k++) {
      const t = new Date(t0 + (t1 - t0) * k / (labels - 1));
      const text = long ? t.toLocaleDateString([], { month: "short", day: "numeric" }) : t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      root.append(svg("text", { x: X(t.getTime()), y: H - PAD.b + 18, "text-anchor": k === 0 ? "start" : k === labels - 1 ? "end" : "middle" }, text));
    }
    return root;
  });
}

/** A histogram of the pool's (or a report's) bins; a note when there is none. */
export function binsChart(bins, unit, description) {
  if (!bins) return el("p", { class: "muted" }, "No " + unit + " in the pool.");
  const labels = bins.counts.map((_, i) => fmt(bins.start + i * bins.width, 0));
  return barChart(labels, [{ values: bins.counts }], description, true);
}
