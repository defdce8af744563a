/**
 * Prometheus text exposition format 0.0.4: families of samples, each family under one `# HELP` and
 * one `# TYPE` line with all its samples together, as the format requires.
 * https://prometheus.io/docs/instrumenting/exposition_formats/
 */

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Label values as given: 64-bit ids stay `bigint` and print in exact decimal. */
export type Labels = Readonly<Record<string, string | number | bigint>>;

interface Family {
  name: string;
  help: string;
  type: "gauge" | "counter" | "histogram";
  lines: string[];
}

/** Backslash, double quote and line feed are the characters a label value must escape. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text escapes backslash and line feed (not quotes). */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(value: number | bigint): string {
  if (typeof value === "bigint") return value.toString();
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

function formatLabels(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(String(value))}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** Collects samples by family, then writes the text; families print in the order first declared. */
export class Exposition {
  private readonly families = new Map<string, Family>();
  private readonly comments: string[] = [];

  gauge(name: string, help: string, labels: Labels, value: number | bigint): void {
    this.sample("gauge", name, help, labels, value);
  }

  counter(name: string, help: string, labels: Labels, value: number | bigint): void {
    this.sample("counter", name, help, labels, value);
  }

  /**
   * A histogram's `_bucket` samples (cumulative, by upper bound `le`, the last `+Inf`), `_sum` and
   * `_count`. `counts` are per bucket, not cumulative: one per bound and one past the last.
   */
  histogram(
    name: string,
    help: string,
    labels: Labels,
    { bounds, counts, sum }: { bounds: readonly number[]; counts: readonly number[]; sum: number },
  ): void {
    const family = this.family("histogram", name, help);
    let cumulative = 0;
    counts.forEach((count, i) => {
      cumulative += count;
      const le = i < bounds.length ? formatValue(bounds[i]!) : "+Inf";
      family.lines.push(`${name}_bucket${formatLabels({ ...labels, le })} ${cumulative}`);
    });
    family.lines.push(
      `${name}_sum${formatLabels(labels)} ${formatValue(sum)}`,
      `${name}_count${formatLabels(labels)} ${cumulative}`,
    );
  }

  /** A `#` line the parsers skip, for readers of the raw text (one line; line feeds become spaces). */
  comment(text: string): void {
    this.comments.push(`# ${text.replace(/\n/g, " ")}`);
  }

  toString(): string {
    const out = [...this.comments];
    for (const family of this.families.values()) {
      out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
      out.push(...family.lines);
    }
    return `${out.join("\n")}\n`;
  }

  private sample(
    type: Family["type"],
    name: string,
    help: string,
    labels: Labels,
    value: number | bigint,
  ): void {
    this.family(type, name, help).lines.push(`${name}${formatLabels(labels)} ${formatValue(value)}`);
  }

  private family(type: Family["type"], name: string, help: string): Family {
    let family = this.families.get(name);
    if (!family) {
      family = { name, help, type, lines: [] };
      this.families.set(name, family);
    }
    return family;
  }
}
