/**
 * The per-request and per-store-call series, kept in plain numbers and handed to prom-client's
 * registry only when scraped: prom-client's own `labels(...).inc()` hashes the label values on
 * every call, which a request would pay several times (the cost: docs/performance.md, "Metrics:
 * what `--metrics-port` adds to a request"). A cell is found once (by its label values) and then updated
 * with an add.
 * @module
 */
import type { Registry } from "prom-client";

interface Cell {
  readonly labels: Readonly<Record<string, string>>;
}

/** A counter cell: `value++`. */
export interface CounterCell extends Cell {
  value: number;
}

/** A histogram cell: `observe(seconds)`. */
export interface HistogramCell extends Cell {
  observe(value: number): void;
}

/** A counter family whose cells are plain numbers (see the module comment). */
export class CellCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  readonly #cells = new Map<string, CounterCell>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The cell of these label values (in `labelNames` order); find it once and keep it. */
  cell(...values: string[]): CounterCell {
    const key = values.join("\u0000");
    let cell = this.#cells.get(key);
    if (cell === undefined) {
      cell = { labels: labelsOf(this.labelNames, values), value: 0 };
      this.#cells.set(key, cell);
    }
    return cell;
  }

  get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.#cells.values()].map((c) => ({ labels: c.labels, value: c.value })),
    };
  }
}

/** A histogram family whose cells are plain arrays (see the module comment). */
export class CellHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #cells = new Map<string, HistogramCell & { counts: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  cell(...values: string[]): HistogramCell {
    const key = values.join("\u0000");
    let cell = this.#cells.get(key);
    if (cell === undefined) {
      const bounds = this.buckets;
      const counts = new Float64Array(bounds.length + 1);
      const created = {
        labels: labelsOf(this.labelNames, values),
        counts,
        sum: 0,
        count: 0,
        observe(value: number) {
          let i = 0;
          while (i < bounds.length && value > bounds[i]!) i++;
          counts[i]!++;
          created.sum += value;
          created.count++;
        },
      };
      cell = created;
      this.#cells.set(key, cell);
    }
    return cell;
  }

  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const cell of this.#cells.values()) {
      let cumulative = 0;
      for (const [i, bound] of [...this.buckets, Number.POSITIVE_INFINITY].entries()) {
        cumulative += cell.counts[i]!;
        values.push({
          labels: { ...cell.labels, le: bound === Number.POSITIVE_INFINITY ? "+Inf" : bound },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({ labels: { ...cell.labels }, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...cell.labels }, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [i, name] of names.entries()) labels[name] = values[i]!;
  return labels;
}
